""""Start when I log in" for serving: the one entry each desktop reads at login.

- Linux (and other XDG desktops): `$XDG_CONFIG_HOME/autostart/draftwise-serve.desktop`
  (default `~/.config/autostart`), a Desktop Entry of Type=Application (the XDG Autostart
  specification);
- macOS: a LaunchAgent, `~/Library/LaunchAgents/org.draftwise.serve.plist`, RunAtLoad;
- Windows: a value of the per-user Run key, `HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run`.

What to write is decided here, pure (`entry`: the path or key by platform and the exact
content); `enable`/`disable` only put it there or take it away. The command is the window
with `--serve` (it starts serving and waits in the tray), so the login start is the same
app the user sees, not a second way of starting engines.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SERVE_FLAG = "--serve"  # the window's option that starts serving at once (gui.py)
DESKTOP_FILE = "draftwise-serve.desktop"
AGENT_LABEL = "org.draftwise.serve"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "Draftwise serve"
GUI_SCRIPT = "draftwise-gui"  # pyproject.toml's gui-scripts entry

LINUX, MACOS, WINDOWS = "linux", "darwin", "win32"


@dataclass(frozen=True)
class AutostartEntry:
    platform: str  # LINUX, MACOS or WINDOWS
    path: Path | None  # the file (Linux, macOS); None for the Run key
    content: str  # the file's text, or the Run value's command line (Windows)


def app_command(executable: str = sys.executable, which=shutil.which, frozen: bool | None = None) -> list[str]:
    """The window with --serve: the packaged app itself (PyInstaller: `executable` is the
    window's launcher), else the `draftwise-gui` beside this Python (a virtual environment's,
    found even when it is not on PATH at login) or on PATH, else this Python running the
    window's module (a source checkout)."""
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    if frozen:
        return [executable, SERVE_FLAG]
    for name in (GUI_SCRIPT, f"{GUI_SCRIPT}.exe"):
        beside = Path(executable).parent / name
        if beside.is_file():
            return [str(beside), SERVE_FLAG]
    found = which(GUI_SCRIPT)
    return [found, SERVE_FLAG] if found else [executable, "-m", "draftwise.gui", SERVE_FLAG]


def entry(command: Sequence[str], *, platform: str | None = None, home: Path | None = None,
          env: Mapping[str, str] | None = None) -> AutostartEntry:
    """The entry that runs `command` at login on `platform` (`sys.platform` spelling; this
    one's by default)."""
    platform = sys.platform if platform is None else platform
    home = Path.home() if home is None else home
    env = os.environ if env is None else env
    if platform == WINDOWS:
        return AutostartEntry(WINDOWS, None, subprocess.list2cmdline(list(command)))
    if platform == MACOS:
        plist = {"Label": AGENT_LABEL, "ProgramArguments": list(command), "RunAtLoad": True,
                 "ProcessType": "Interactive"}
        return AutostartEntry(MACOS, home / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist",
                              plistlib.dumps(plist).decode("utf-8"))
    config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return AutostartEntry(LINUX, config / "autostart" / DESKTOP_FILE, desktop_entry(command))


def desktop_entry(command: Sequence[str]) -> str:
    """The Desktop Entry text (UTF-8, one key a line)."""
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Name=Draftwise: serve my models",
        "Comment=Serves the models of your Draftwise library to other programs",
        f"Exec={exec_line(command)}",
        "Icon=draftwise",
        "Terminal=false",
        "X-GNOME-Autostart-enabled=true",
        "",
    ])


# The Desktop Entry specification's Exec quoting: an argument with a reserved character is
# put in double quotes, where `"`, backquote, `$` and `\` take a backslash; the value itself
# is a string, so each backslash is written twice; a literal `%` is `%%` (field codes).
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def exec_line(command: Sequence[str]) -> str:
    out = []
    for arg in command:
        arg = arg.replace("%", "%%")
        if any(c in _RESERVED for c in arg):
            quoted = "".join("\\" + c if c in '"`$\\' else c for c in arg)
            arg = '"' + quoted.replace("\\", "\\\\") + '"'
        out.append(arg)
    return " ".join(out)


def is_enabled(e: AutostartEntry) -> bool:
    if e.platform == WINDOWS:
        return _run_value() is not None
    return e.path is not None and e.path.is_file()


def enable(e: AutostartEntry) -> None:
    """Put the entry in place (OSError when it cannot be written)."""
    if e.platform == WINDOWS:
        import winreg  # Windows only

        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            winreg.SetValueEx(key, RUN_VALUE, 0, winreg.REG_SZ, e.content)
        return
    assert e.path is not None
    e.path.parent.mkdir(parents=True, exist_ok=True)
    e.path.write_text(e.content, encoding="utf-8")


def disable(e: AutostartEntry) -> None:
    """Take the entry away (nothing to do when it is not there)."""
    if e.platform == WINDOWS:
        import winreg  # Windows only

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
                winreg.DeleteValue(key, RUN_VALUE)
        except FileNotFoundError:
            return  # the value was not there: the entry is already gone
        return
    assert e.path is not None
    e.path.unlink(missing_ok=True)


def _run_value() -> str | None:
    import winreg  # Windows only

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            return str(winreg.QueryValueEx(key, RUN_VALUE)[0])
    except FileNotFoundError:
        return None
