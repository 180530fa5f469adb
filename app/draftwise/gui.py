"""`draftwise-gui`: the desktop app's entry point.

The window itself is being built (issue 6); until then this entry runs the machine check,
so the installed shortcut does real work instead of failing.
"""

from __future__ import annotations

import sys


def main() -> int:
    from draftwise.cli.main import main as cli_main

    print("The Draftwise window is not built yet; running the machine check instead.")
    return cli_main(["check", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
