#!/usr/bin/env bash
# Newer Vulkan headers for building ggml's Vulkan backend on Debian 12.
#
# Debian 12's libvulkan-dev (1.3.239) lacks VK_EXT_layer_settings, which this ggml needs
# ("'LayerSettingEXT' is not a member of 'vk'"). Debian 13's libvulkan-dev (1.4.x) works. We
# download that one package with a private apt state (the system's sources stay as they are),
# unpack it with dpkg -x and print the include folder for cmake's -DVulkan_INCLUDE_DIR.
# The loader, glslc and the drivers stay Debian 12's. Prints nothing and exits 0 when the
# system headers are new enough. Usage: vulkan-headers.sh CACHE_DIR
set -euo pipefail
cache="${1:?usage: vulkan-headers.sh CACHE_DIR}"
if grep -q LayerSettingEXT /usr/include/vulkan/vulkan_structs.hpp 2>/dev/null; then
  exit 0
fi
dest="$cache/vulkan-headers"
if [ -f "$dest/usr/include/vulkan/vulkan.hpp" ]; then
  echo "$dest/usr/include"
  exit 0
fi
state="$cache/vulkan-headers-apt"
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$dest.partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# The Debian mirror this machine already uses (its first non-security archive), asked for trixie.
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
  grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -n1 | tr -d ' ' || true)
if [ -z "$mirror" ]; then
  echo "vulkan-headers.sh: no Debian archive found in this machine's apt sources" >&2
  exit 1
fi
echo "deb [signed-by=$keyring] ${mirror%/} trixie main" >"$state/sources.list"
opts=(-o "Dir::Etc::sourcelist=$state/sources.list" -o "Dir::Etc::sourceparts=-"
      -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
      -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root" -o "APT::Get::List-Cleanup=0")
apt-get "${opts[@]}" update -qq >&2
(cd "$state" && apt-get "${opts[@]}" download -qq libvulkan-dev >&2)
deb=$(ls "$state"/libvulkan-dev_*.deb | head -n1)
dpkg -x "$deb" "$dest.partial"
rm -rf "$dest" && mv "$dest.partial" "$dest"
echo "$dest/usr/include"
