"""Engine faults on demand: the real engine behind a wrapper that fails the way a machine does.

Tests of what Draftwise does after a fault must not depend on the machine they run on (the
AMX fault needs a virtual machine that reports AMX but does not run it). The wrapper here is
a `llama-server` in a folder of the test's: anything but a model start, and every start with
`-nr`, is the real engine (`exec`); a model start without `-nr` of a quantized file (its name
says so: `Q4_0`, `q4_k_m`, `Q8_0`...) runs the real engine until it has allocated its buffers
(the first `sched_reserve: ... compute buffer size` line), prints the line of the AMX CPU
module the engine loaded, stops the real engine and dies of SIGILL — what the engine does on
such a machine at warm-up (docs/engine-observations.md, "GPU on lavapipe and the CPU's extra
buffers"). Each fault appends a line to `faults.log` beside the wrapper.
"""

from __future__ import annotations

import shlex
from pathlib import Path

_AMX_WRAPPER = r"""#!/bin/sh
real=__REAL__
faults=__FAULTS__
case " $* " in *" -m "*) ;; *) exec "$real" "$@" ;; esac
case " $* " in *" -nr "*|*" --no-repack "*) exec "$real" "$@" ;; esac
quantized=0
prev=
for a in "$@"; do
  if [ "$prev" = "-m" ]; then
    case ${a##*/} in *[Qq][0-9]_*) quantized=1 ;; esac
  fi
  prev=$a
done
[ $quantized -eq 1 ] || exec "$real" "$@"
ulimit -c 0
printf '%s\n' "0.00.010.000 I load_backend: loaded CPU backend from ${real%/*}/libggml-cpu-sapphirerapids.so"
fifo="${TMPDIR:-/tmp}/draftwise-amx-$$.fifo"
rm -f "$fifo"
mkfifo "$fifo" || exit 70
"$real" "$@" > "$fifo" 2>&1 &
engine=$!
while IFS= read -r line; do
  printf '%s\n' "$line"
  case $line in *"sched_reserve:"*"compute buffer size"*) break ;; esac
done < "$fifo"
kill -s KILL "$engine" 2>/dev/null
wait "$engine" 2>/dev/null
rm -f "$fifo"
echo "fault $*" >> "$faults"
kill -s ILL $$
"""


def amx_faulting_engine(binary: Path, folder: Path) -> Path:
    """A llama-server in `folder` that meets the AMX fault on quantized models (module doc)."""
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / binary.name
    text = _AMX_WRAPPER.replace("__REAL__", shlex.quote(str(binary.resolve())))
    wrapper.write_text(text.replace("__FAULTS__", shlex.quote(str(folder / "faults.log"))), encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


def faults(wrapper: Path) -> int:
    """How many starts the wrapper failed so far."""
    log = wrapper.parent / "faults.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.is_file() else 0
