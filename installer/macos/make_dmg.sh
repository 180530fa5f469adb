#!/usr/bin/env bash
# Build a compressed, drag-to-Applications disk image from the PyInstaller .app (macOS only).
#
#   installer/macos/make_dmg.sh dist/Draftwise.app dist/Draftwise-0.1.0-macos-arm64.dmg
#
# The release workflow runs it on macos-14 after the app is signed. With DRAFTWISE_CODESIGN_ID
# set, the image itself is signed too (notarization is a workflow step: it needs Apple's
# service). hdiutil exists only on macOS: there is no Linux path for a DMG.
set -euo pipefail

app=${1:?usage: make_dmg.sh APP.app OUT.dmg [VOLUME NAME]}
out=${2:?usage: make_dmg.sh APP.app OUT.dmg [VOLUME NAME]}
volume=${3:-Draftwise}

if [ "$(uname -s)" != "Darwin" ]; then
  echo "make_dmg.sh needs macOS (hdiutil); build the DMG in the release workflow." >&2
  exit 2
fi
[ -d "$app/Contents/MacOS" ] || { echo "$app is not an .app bundle" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# ditto keeps symlinks, extended attributes and the code signature intact.
ditto "$app" "$stage/$(basename "$app")"
ln -s /Applications "$stage/Applications"

rm -f "$out"
mkdir -p "$(dirname "$out")"
hdiutil create -volname "$volume" -srcfolder "$stage" -fs HFS+ -format UDZO \
  -imagekey zlib-level=9 -ov "$out"
if [ -n "${DRAFTWISE_CODESIGN_ID:-}" ]; then
  codesign --force --timestamp --sign "$DRAFTWISE_CODESIGN_ID" "$out"
fi
hdiutil verify "$out"
echo "make_dmg.sh: $out ($(du -h "$out" | cut -f1))"
