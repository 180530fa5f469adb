"""When Draftwise dies, the process groups it started die with it (Linux and macOS).

A clean stop ends every engine and worker, and on Windows a kill-on-close Job Object
(core/processes/process_group.py) takes them when Draftwise is killed. On Unix nothing did: a
SIGKILLed `draftwise launch` left its llama-server running, holding the model's memory, until
the run files (core/processes/orphans.py) stopped it at the next start.

The lifeline is one small watcher per Draftwise process: `/bin/sh` running `_WATCHER`, in
its own session (a Ctrl-C or a closed terminal does not reach it), reading a pipe whose only
write end Draftwise holds (`os.pipe()` descriptors are close-on-exec, so no engine inherits
it). Draftwise writes `+PID` when it starts a group and `-PID` when that group has ended.
When Draftwise dies, however it dies, the kernel closes the write end; the watcher reads
end-of-file, sends SIGTERM to every group still held, and SIGKILL half a second later to
whatever is left.

Why not the alternatives:
- PR_SET_PDEATHSIG (Linux only) must be set in the child between fork and exec. PySide6
  6.11 does not bind `QProcess.setChildProcessModifier` (only `failChildProcessModifier`),
  `subprocess`'s `preexec_fn` is unsafe in a process with threads, and the signal fires when
  the forking *thread* ends, not the process: QProcess forks from the thread that calls
  `start()` (the GUI thread), the headless runner from whichever thread drives it (the
  window's speed measurement runs on a pool thread), so each engine would be tied to a thread
  rather than to Draftwise, and macOS has no such signal at all.
- An exec wrapper in front of the engine would add a process start to every launch (the
  request-to-ready budget is about a millisecond) and change the pid the run files verify.

The watcher is started lazily at the first group, never in the engine's path: the engine is
already running when it is told about it. If the watcher itself was killed, the next update
starts a new one and hands it every group still held. The script is a constant; the pids
arrive on its stdin as digits and are checked again there.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

log = logging.getLogger(__name__)

GRACE_S = 0.5  # between the watcher's SIGTERM and its SIGKILL (the spec: gone within a second)

# POSIX sh (dash, bash, the macOS /bin/sh). `held` is " pid pid ... " with spaces around each.
_WATCHER = r"""
held=" "
while IFS= read -r line; do
  id=${line#?}
  case $id in ''|*[!0-9]*) continue ;; esac
  case $line in
    +*) held="$held$id " ;;
    -*) case $held in *" $id "*) held="${held%% $id *} ${held#* $id }" ;; esac ;;
  esac
done
set -- $held
[ $# -eq 0 ] && exit 0
for id in "$@"; do kill -s TERM -- "-$id" 2>/dev/null; done
n=0
while [ $n -lt 5 ]; do
  sleep 0.1
  alive=0
  for id in "$@"; do kill -s 0 -- "-$id" 2>/dev/null && alive=1; done
  [ $alive -eq 0 ] && exit 0
  n=$((n + 1))
done
for id in "$@"; do kill -s KILL -- "-$id" 2>/dev/null; done
exit 0
"""
WATCHER_NAME = "draftwise-lifeline"  # $0 of the watcher: what `ps` shows beside /bin/sh


class Lifeline:
    """The watcher of one Draftwise process. Thread-safe; a no-op on Windows."""

    def __init__(self, shell: str = "/bin/sh") -> None:
        self._shell = shell
        self._lock = threading.Lock()
        self._held: set[int] = set()
        self._proc: subprocess.Popen[bytes] | None = None
        self._write: int | None = None

    @property
    def supported(self) -> bool:
        return sys.platform != "win32"

    @property
    def watcher_pid(self) -> int | None:
        """The watcher's pid while one runs (tests)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def hold(self, pid: int) -> None:
        """Stop the group `pid` leads if Draftwise dies before `let_go(pid)`."""
        if not self.supported or pid <= 0:
            return
        with self._lock:
            self._held.add(pid)
            self._update(f"+{pid}\n")

    def let_go(self, pid: int) -> None:
        """The group ended under our control: nothing to stop for it any more."""
        with self._lock:
            if pid not in self._held:
                return
            self._held.discard(pid)
            self._update(f"-{pid}\n")

    # ------------------------------------------------------------ the watcher
    def _update(self, line: str) -> None:
        if self._write is not None and self._proc is not None and self._proc.poll() is None:
            try:
                os.write(self._write, line.encode("ascii"))
                return
            except OSError as exc:  # the watcher went away between the check and the write
                log.info("lifeline watcher gone (%s); starting another", exc)
        self._close()
        if not self._held:
            return
        try:
            self._start()
            os.write(self._write, "".join(f"+{p}\n" for p in sorted(self._held)).encode("ascii"))  # type: ignore[arg-type]
        except OSError as exc:
            # The groups still stop normally; only a crash of Draftwise would now leave them
            # running until the next start (the run files).
            log.warning("could not start the lifeline watcher: %s", exc)
            self._close()

    def _start(self) -> None:
        read, write = os.pipe()  # both close-on-exec: no engine inherits the write end
        try:
            self._proc = subprocess.Popen(
                [self._shell, "-c", _WATCHER, WATCHER_NAME], stdin=read, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
            )
        except OSError:
            os.close(write)
            raise
        finally:
            os.close(read)
        self._write = write

    def _close(self) -> None:
        """Drop the watcher. One still running is killed first: closing its pipe would make it
        stop every group it holds."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if self._write is not None:
            try:
                os.close(self._write)
            except OSError as exc:
                log.info("lifeline pipe already closed: %s", exc)
            self._write = None


_LIFELINE = Lifeline()


def hold(pid: int) -> None:
    _LIFELINE.hold(pid)


def let_go(pid: int) -> None:
    _LIFELINE.let_go(pid)


def watcher_pid() -> int | None:
    return _LIFELINE.watcher_pid
