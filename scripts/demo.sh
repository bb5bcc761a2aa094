#!/bin/sh
# make demo: what memsim shows today.  Until the interposer (libmemsim.so)
# lands, that is the simulated device: one seeded workload through every
# allocation strategy, side by side.
set -eu
BUILD=${1:-build}
MEMSIM=$BUILD/memsim

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

TXT

OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
cat <<TXT

memsim run: a bundled program under the interposer
==================================================
build/programs/det_heap makes 20,000 allocations, 10,000 reallocs and 20,000
frees, and leaks one block. memsim run traces it and watches its RSS from
outside:

TXT
"$MEMSIM" run --out "$OUT/run" --sample-ms 5 -- "$BUILD/programs/det_heap"
trace=$(ls "$OUT"/run/memsim.det_heap.*.jsonl)
echo
echo "its trace ($(wc -l <"$trace") records), by type:"
sed -n 's/^{"ev":"\([a-z_]*\)".*/\1/p' "$trace" | sort | uniq -c | sort -rn | sed 's/^/  /'
echo "checked against the format's rules:"
"$BUILD/tracecheck" "$trace" | sed 's/^/  /'
echo "the end record:"
tail -n 1 "$trace" | sed 's/ *$//; s/^/  /'
cat <<'TXT'

memsim-analyze: the trace, analyzed
===================================
TXT
"$BUILD/memsim-analyze" "$OUT/run"
cat <<'TXT'

Try: build/memsim run --analyze ./your-program   (and --help on each command)
TXT
