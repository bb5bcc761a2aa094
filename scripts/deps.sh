#!/bin/sh
# Make sure the Debian packages memsim builds against are installed.
# As root: install what is missing.  Otherwise: say exactly what to run.
set -u
PKGS="gcc pkg-config libjansson-dev check libunwind-dev libdw-dev libzstd-dev zstd libprotobuf-c-dev protobuf-c-compiler zlib1g-dev"
# The real allocators memsim-analyze --allocators and memsim run --allocator
# use (allocators/catalog.c): installed as root; otherwise one line says
# how, and memsim builds and runs without them.
ALLOC_PKGS="libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4"

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

alloc_missing=""
if command -v dpkg-query >/dev/null 2>&1; then
    for p in $ALLOC_PKGS; do
        installed "$p" || alloc_missing="$alloc_missing $p"
    done
fi
if [ -n "$alloc_missing" ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "memsim: installing the allocators memsim-analyze --allocators compares:$alloc_missing" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $alloc_missing >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $alloc_missing >/dev/null 2>&1; } ||
            echo "memsim: apt-get install$alloc_missing failed; --allocators names them as not installed" >&2
    else
        echo "memsim: for memsim-analyze --allocators, run: sudo apt-get install -y$alloc_missing" >&2
    fi
fi

missing=""
for p in $PKGS; do
    if ! installed "$p"; then
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
