#!/bin/sh
# make demo: what memsim shows, in one command.  First the simulated
# device: one seeded workload through every allocation strategy.  Then a
# bundled program (examples/demo_workload.c) under memsim run, and its
# trace analyzed by memsim-analyze: summary, leaks, findings (fragmentation,
# a spike, a drift, each in its phase), the replay through the strategies
# and through the real allocators (glibc, jemalloc, mimalloc, tcmalloc).
#
#   sh scripts/demo.sh [BUILD [DIR]]
#
# DIR: put the run (DIR/run), its trace and its report (DIR/report.html)
# there instead of BUILD/demo; either is emptied first and kept after.
set -eu
BUILD=${1:-build}
KEEP=${2:-}
MEMSIM=$BUILD/memsim

cat <<'TXT'
memsim demo 1/2: one workload, six allocation strategies
========================================================
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

# The run, its trace and its report stay in $BUILD/demo (the last demo's:
# replaced each time), so that the page it names can be opened after.
OUT=${KEEP:-$BUILD/demo}
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cat <<'TXT'
memsim demo 2/2: a real program, traced and analyzed
====================================================
examples/demo_workload.c runs for about 4 seconds in four phases, which it
marks with MEMSIM_PHASE_BEGIN/END (include/memsim.h):
  warmup    a steady working set of small blocks
  fragment  1,536 records of a large payload and a small key; the payloads
            are freed, leaving holes between the keys
  spike     a 352 MiB in-memory file mapped and read through, then dropped
  leak      requests that each leak an 80 KiB block
memsim run traces every allocation and samples the process every 20 ms:

TXT
"$MEMSIM" run --force --out "$OUT/run" --sample-ms 20 -- "$BUILD/examples/demo_workload"
trace=$(ls "$OUT"/run/memsim.demo_workload.*.jsonl*)
echo
# The trace is JSON lines, zstd-compressed by default: zstdcat reads it.
zstd -dc "$trace" >"$OUT/trace.jsonl"
printf 'its trace (%s, %s bytes), %s records: ' "$(basename "$trace")" "$(wc -c <"$trace" | tr -d ' ')" \
    "$(wc -l <"$OUT/trace.jsonl" | tr -d ' ')"
sed -n -e 's/^{"ev":"\([a-z_]*\)".*/\1/p' -e 's/^\["a".*/alloc/p' -e 's/^\["f".*/free/p' \
    -e 's/^\["r".*/realloc/p' -e 's/^\["x".*/realloc_failed/p' "$OUT/trace.jsonl" |
    sort | uniq -c | sort -rn |
    awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2} END {print ""}'
rm -f "$OUT/trace.jsonl"
cat <<'TXT'

memsim-analyze --allocators glibc,jemalloc,mimalloc,tcmalloc on the run's
directory:

TXT
# The real allocators too: an allocator not installed is a line on stderr
# naming the package (scripts/deps.sh, which make runs first, installs
# them as root and otherwise prints the line), and the others still run.
ALLOCATORS=glibc,jemalloc,mimalloc,tcmalloc
"$BUILD/memsim-analyze" --allocators "$ALLOCATORS" "$OUT/run" | tee "$OUT/analysis.txt"
"$BUILD/memsim-analyze" --allocators "$ALLOCATORS" --html "$OUT/report.html" "$OUT/run" 2>/dev/null &&
    echo "
The same as a page with plots (timeline, both replays, flame graph), to open
in any browser: $OUT/report.html"
cat <<'TXT'

How to read it:
  - The summary counts what the program asked of malloc: allocations,
    "temporary" ones (freed right after they were made), the peak of the
    live heap, the peak RSS the OS charged, and the leaks: blocks still
    allocated at exit (the leak phase's, and stdout's buffer).  The
    "mapped" line is the program's own mmap calls, which malloc never
    sees, and "RSS at its top" what the RSS was made of.
  - Each finding names what it saw in the samples, its severity, when, in
    which phase, and what to try.  The "gap" is RSS minus what malloc
    holds: the spike is a file the program mapped, and the finding says
    which share of it that mapping explains and where it was made; fragmentation is malloc holding the freed payloads' holes,
    which it cannot return while the keys sit between them.  The drift of
    the live heap over the whole run is the leak.
  - The strategies table replays the trace's allocations through each
    allocation strategy of memsim simulate: the peak footprint each would
    have needed for the same requests, and its fragmentation.
  - The allocators table replays the same requests through the real
    allocators, each in a process of its own with the allocator
    preloaded: the peak RSS each would have held, ranked with the
    strategies, and the saving of switching from glibc, which the demo
    ran with, to the best.  The fragment phase's holes are glibc's: an
    allocator that keeps small and large blocks apart holds less.
TXT
if ! grep -q 'transient spike' "$OUT/analysis.txt"; then
    cat <<'TXT'
  (No spike found this time: the samples, every 20 ms, missed the
  mapping's short life; the mapped line still shows its 352 MiB.)
TXT
fi
cat <<'TXT'

Try: build/memsim run --analyze ./your-program   (and --help on each command)
TXT
