#!/bin/sh
# Make sure the Debian packages memsim builds against are installed.
# As root: install what is missing.  Otherwise: say exactly what to run.
set -u
PKGS="gcc pkg-config libjansson-dev check libunwind-dev libdw-dev libzstd-dev zstd libprotobuf-c-dev protobuf-c-compiler zlib1g-dev"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "memsim: missing packages:$missing (install them with your package manager)" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "memsim: missing Debian packages:$missing" >&2
    echo "memsim: run: sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "memsim: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq $missing >/dev/null || {
    echo "memsim: apt-get install$missing failed" >&2
    exit 1
}
