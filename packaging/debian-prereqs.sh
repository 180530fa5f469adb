#!/usr/bin/env bash
# Installs what Draftwise needs from Debian/Ubuntu packages, only when something is missing:
# Python's venv, a C++ toolchain and cmake (to build llama-server once), and the shared
# libraries Qt loads even offscreen. Uses sudo when not root. Safe to run again.
set -euo pipefail

need=()
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
command -v cmake >/dev/null || need+=(cmake)
command -v c++ >/dev/null || need+=(build-essential)
for pkg in libegl1 libgl1 libfontconfig1 libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3 \
           libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 \
           libxcb-shape0 libxcb-xkb1 ${DRAFTWISE_EXTRA_DEBS:-}; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "Draftwise needs these packages (names as on Debian): ${need[*]}. Install them with your system's package manager." >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "Installing Debian packages: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
