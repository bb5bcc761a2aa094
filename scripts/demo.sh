#!/bin/sh
# make demo: what memsim shows today.  Until the interposer (libmemsim.so)
# lands, that is the simulated device: one seeded workload through every
# allocation strategy, side by side.
set -eu
MEMSIM=${1:-build/memsim}

cat <<'TXT'
memsim demo: one workload, six allocation strategies
=====================================================
A seeded random program: 300,000 operations; each frees a random live
block with probability 0.48 or allocates 16 B..16 KiB, on a 1 GiB device.
Every strategy sees exactly the same requests.

TXT
"$MEMSIM" simulate --ops 300000 --free-prob 0.48 --min-size 16 --max-size 16K \
    --device-size 1G --seed 2026
cat <<'TXT'

How to read it: best fit and address-ordered first fit stay within a few
percent of the live peak, next fit and worst fit spread the heap out, and
buddy pays for power-of-two rounding (int@peak) -- the pattern Johnstone and
Wilson measured on real programs.  The caching pool rounds to 512 bytes and
keeps whole 2 MiB segments reserved.

Try: build/memsim simulate --help
TXT
