"""`draftwise-gui`: the desktop app's entry point.

    draftwise-gui                        open the window
    draftwise-gui --screenshot OUT.png [--model PATH]
                                         render the window offscreen (that model chosen),
                                         write the PNG and exit
    draftwise-gui --self-test            check that this installation works (packaging)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_T0 = time.time()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="draftwise-gui", description="Draftwise: run a local LLM, with speculative decoding set up for you.")
    p.add_argument("--screenshot", metavar="OUT.png", help="render the window offscreen to a PNG and exit")
    p.add_argument("--model", metavar="PATH", help="with --screenshot: the model to show")
    p.add_argument("--size", default="1280x820", help="with --screenshot: window size (WIDTHxHEIGHT)")
    p.add_argument("--lang", choices=["system", "en", "ja"],
                   help="the language (kept, as the View menu's choice is; with --screenshot for that picture only)")
    p.add_argument("--scheme", choices=["system", "light", "dark"], default="system",
                   help="colour scheme (default: follow the system)")
    p.add_argument("--launch", action="store_true",
                   help="with --screenshot: launch the model and wait until it is ready first")
    p.add_argument("--chat", metavar="QUESTION",
                   help="with --screenshot --launch: ask the model this in the chat tab and wait for the reply")
    p.add_argument("--picture", metavar="IMAGE",
                   help="with --chat: attach this picture to the question (a model launched with its projector)")
    p.add_argument("--serve", action="store_true",
                   help="serve every model of the library at once (Serve my models), waiting in the tray: what "
                        "\"Start when I log in\" runs")
    p.add_argument("--self-test", action="store_true", help="check this installation and exit")
    p.add_argument("--no-check", action="store_true", help="do not run the machine check on a first start")
    # For bench/gui_startup.py: print the wall time of the first paint and exit.
    p.add_argument("--first-paint-exit", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--self-test" in argv:
        # The self-test has options of its own (--engine, --log): pass everything on.
        return _self_test([a for a in argv if a != "--self-test"])
    args = build_parser().parse_args(argv)
    if args.screenshot or args.first_paint_exit:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from PySide6.QtWidgets import QApplication

    from draftwise import __version__

    QApplication.setApplicationName("Draftwise")
    QApplication.setApplicationDisplayName("Draftwise")
    QApplication.setOrganizationName("Draftwise")
    QApplication.setApplicationVersion(__version__)
    QApplication.setDesktopFileName("draftwise")
    app = QApplication.instance() or QApplication([sys.argv[0]])

    from draftwise.ui.theme import app_icon

    app.setWindowIcon(app_icon())
    if args.scheme != "system":
        from PySide6.QtCore import Qt

        scheme = Qt.ColorScheme.Dark if args.scheme == "dark" else Qt.ColorScheme.Light
        app.styleHints().setColorScheme(scheme)
        from draftwise.ui.theme import dark_palette, is_dark

        if args.scheme == "dark" and not is_dark():
            app.setPalette(dark_palette())  # the platform has no dark theme to switch to
    if args.screenshot:
        return _screenshot(app, Path(args.screenshot), args.model, args.size, args.lang, args.launch, args.chat,
                           args.picture)
    if args.first_paint_exit:
        return _first_paint(app)
    return _run(app, args)


def _self_test(argv: list[str]) -> int:
    """The self-test paints the main window this module builds (it imports no GUI itself)."""
    from draftwise import selftest

    return selftest.run(argv, window_factory=create_window)


def create_window():
    """The main window on in-memory default settings, nothing started (the self-test paints it)."""
    from draftwise.core.settings import LoadResult, Settings

    _vm, win = _make_window(LoadResult(Settings(), Path(os.devnull)), persist=False, lang=None)
    return win


def _make_window(loaded, *, persist: bool, lang: str | None):
    from draftwise.ui.main_window import MainWindow
    from draftwise.viewmodels.app import AppViewModel
    from draftwise.viewmodels.i18n import LanguageManager

    language = LanguageManager()
    language.apply(lang or loaded.settings.language)
    if lang:
        loaded.settings.language = lang
    vm = AppViewModel(loaded, persist=persist, language=language)
    return vm, MainWindow(vm)


def _run(app, args) -> int:
    from PySide6.QtCore import QTimer

    from draftwise.core import settings

    loaded = settings.load()
    first_start = not loaded.path.exists() and loaded.problem is None
    vm, win = _make_window(loaded, persist=True, lang=args.lang)
    if not (args.serve and win.tray is not None):
        win.show()  # --serve at login waits in the tray; without a tray, the window is how to stop it

    def start() -> None:
        vm.start()
        if args.serve:
            vm.serve.start_when_ready()
        s = vm.settings
        if not args.no_check and first_start and not s.model_folders and not s.model_files:
            # A machine without models: prove the engine works here, the same as `draftwise check`.
            win.show_check()

    # Background work starts after the first paint, so the window appears at once.
    QTimer.singleShot(0, start)
    _quit_on_signals(win)
    code = app.exec()
    vm.save_settings()
    return code


def _quit_on_signals(win) -> None:
    """Ctrl+C in the terminal (or SIGTERM) quits like the Quit menu: the engine is stopped."""
    import signal

    from PySide6.QtCore import QTimer

    def handler(signum, frame) -> None:
        QTimer.singleShot(0, win.quit)

    for sig in (signal.SIGINT, getattr(signal, "SIGTERM", None)):
        if sig is not None:
            signal.signal(sig, handler)
    # Python runs signal handlers only between bytecodes: wake it up now and then.
    tick = QTimer(win)
    tick.setInterval(250)
    tick.timeout.connect(lambda: None)
    tick.start()


def _first_paint(app) -> int:
    from PySide6.QtCore import QEvent, QObject, QTimer

    from draftwise.core.settings import LoadResult, Settings

    vm, win = _make_window(LoadResult(Settings(), Path(os.devnull)), persist=False, lang="en")

    class FirstPaintWatch(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 — Qt override
            if event.type() == QEvent.Type.Paint:
                print(f"first-paint {time.time():.6f} import-start {_T0:.6f}", flush=True)
                QTimer.singleShot(0, app.quit)
                app.removeEventFilter(self)
            return False

    watch = FirstPaintWatch()
    app.installEventFilter(watch)
    win.show()
    QTimer.singleShot(0, lambda: vm.start(reopen_last=False, scan=False))
    QTimer.singleShot(10000, app.quit)
    app.exec()
    vm.runner.wait(15000)
    return 0


def _screenshot(app, out: Path, model: str | None, size: str, lang: str | None, launch: bool = False,
                chat: str | None = None, picture: str | None = None) -> int:
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

    from draftwise.core.launch.outcome import Stage
    from draftwise.core.settings import LoadResult, Settings

    s = Settings()
    if model:
        mp = Path(model).expanduser().resolve()
        if not mp.is_file():
            print(f"draftwise-gui: {mp} does not exist", file=sys.stderr)
            return 2
        s.model_folders = [str(mp.parent)]
        s.last_model = str(mp)
    s.language = lang or "en"
    vm, win = _make_window(LoadResult(s, Path(os.devnull)), persist=False, lang=s.language)
    try:
        w, h = (int(x) for x in size.lower().split("x"))
    except ValueError:
        w, h = 1280, 820
    win.resize(w, h)
    win.split.setSizes([int(w * 0.47), int(w * 0.53)])
    win.details.toggle.setChecked(not launch)
    win.show()
    vm.start(reopen_last=bool(model))

    def settled() -> bool:
        if vm.engine.detecting or vm.library.scanning or vm.machine is None:
            return False
        return not model or (vm.outcome is not None and not vm.replanning)

    clock = QElapsedTimer()
    clock.start()
    loop = QEventLoop()
    poll = QTimer()
    poll.setInterval(50)
    poll.timeout.connect(lambda: loop.quit() if settled() or clock.elapsed() > 60000 else None)
    poll.start()
    loop.exec()
    poll.stop()
    if launch and model and vm.can_launch():
        win.act_logs.setChecked(True)
        win.vsplit.setSizes([int(h * 0.78), int(h * 0.22)])
        vm.do_launch()
        clock.restart()
        wait = QEventLoop()
        poll.timeout.disconnect()
        poll.timeout.connect(lambda: wait.quit() if (vm.launch.state in (Stage.READY, Stage.FAILED)
                                                     and vm.plan.actual is not None)
                             or vm.launch.state == Stage.FAILED or clock.elapsed() > 90000 else None)
        poll.start()
        wait.exec()
        poll.stop()
        if chat and vm.launch.state == Stage.READY:
            win.act_logs.setChecked(False)
            win.open_chat_page()
            clock.restart()
            if picture:  # the engine's /props answers just after ready
                poll.timeout.disconnect()
                poll.timeout.connect(lambda: wait.quit() if vm.chat.pictures.vision or clock.elapsed() > 10000
                                     else None)  # fmt: skip
                poll.start()
                wait.exec()
                poll.stop()
                vm.chat.pictures.attach_file(picture)
            vm.chat.send(chat)
            clock.restart()
            poll.timeout.disconnect()
            poll.timeout.connect(lambda: wait.quit() if not vm.chat.busy or clock.elapsed() > 90000 else None)
            poll.start()
            wait.exec()
            poll.stop()
    # Let the last results paint.
    end = QElapsedTimer()
    end.start()
    while end.elapsed() < 300:
        app.processEvents()
    out.parent.mkdir(parents=True, exist_ok=True)
    ok = win.grab().save(str(out))
    if vm.engine_running():
        stopped = QEventLoop()
        vm.launch.ended.connect(stopped.quit)
        QTimer.singleShot(15000, stopped.quit)
        vm.do_stop()
        stopped.exec()
    vm.runner.wait(30000)
    if not ok:
        print(f"draftwise-gui: could not write {out}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({w}x{h}){'' if settled() else ' (some background work had not finished)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
