# Compressed traces, the default: named .jsonl.zst, one zstd
# frame per flush, read by memsim-analyze and tracecheck exactly as the
# plain ones; a recorder killed mid-run leaves every whole frame readable
# and the program unharmed; a damaged or cut file is one clear line.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - compression tests: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi

LIB=$(cd "$BUILD" && pwd)/libmemsim.so
TRACECHECK=$BUILD/tracecheck
A=$BUILD/memsim-analyze
PROG=$BUILD/programs
for need in "$LIB" "$TRACECHECK" "$A" "$PROG/det_heap" "$PROG/alloc_heavy" "$PROG/mt_alloc"; do
    if [ ! -x "$need" ] && [ ! -e "$need" ]; then
        fail "compression tests" "$need is missing: run them with make integration"
        summary
        exit
    fi
done
LIMIT=60
unset LD_PRELOAD MEMSIM_OUTPUT MEMSIM_STRATEGY MEMSIM_DEVICE_SIZE MEMSIM_STACK_DEPTH \
    MEMSIM_SAMPLE_MS MEMSIM_TRACE_CHILDREN MEMSIM_MMAP MEMSIM_ROOT_PID MEMSIM_COMPRESS

# trace DIR CMD...: CMD under the preload, tracing into DIR (created).
trace() {
    d=$1
    shift
    mkdir -p "$d"
    timeout -k 2 "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$d" "$@"
}

# magic FILE: the first four bytes, in hex.
magic() { od -An -tx1 -N4 "$1" | tr -d ' \n'; }

# the counts tracecheck gives, less the record count (a compressed and a
# plain run of a deterministic program differ in samples only)
counts() { "$TRACECHECK" "$1" | sed 's/records=[0-9]* //'; }

# ---- the default ----------------------------------------------------------------------

trace "$TMP/z" "$PROG/det_heap" >"$TMP/z.out"
MEMSIM_COMPRESS=0 trace "$TMP/p" "$PROG/det_heap" >"$TMP/p.out"
z=$(find "$TMP/z" -name 'memsim.det_heap.*.jsonl.zst')
p=$(find "$TMP/p" -name 'memsim.det_heap.*.jsonl')
expect_eq "default: one trace named .jsonl.zst" "$(echo "$z" | grep -c 'jsonl.zst$')" 1
expect_eq "default: it is zstd (magic 28b52ffd)" "$(magic "${z:-/dev/null}")" 28b52ffd
expect_eq "MEMSIM_COMPRESS=0: plain JSON lines" "$(head -c 8 "${p:-/dev/null}")" '{"ev":"m'
expect_eq "det_heap's output is the same either way" "$(cat "$TMP/z.out")" "$(cat "$TMP/p.out")"
expect_status "the compressed trace passes tracecheck" 0 "$TRACECHECK" "$z"
expect_eq "the same counts as the plain trace" "$(counts "$z")" "$(counts "$p")"
# The analysis of the compressed trace is that of the same records
# plain, but for the file's name.  (Against the plain run's trace, its
# samples differ: the findings may, on a loaded machine.)
strip() { grep -v 'duration\|peak RSS\|RSS at its top\|==\|at [0-9.]* s' "$1"; }
"$A" --no-replay "$z" >"$TMP/za.txt" 2>"$TMP/za.err"
"$TRACECHECK" --cat "$z" >"$TMP/zp.jsonl"
"$A" --no-replay "$TMP/zp.jsonl" >"$TMP/pa.txt" 2>"$TMP/pa.err"
expect_eq "memsim-analyze: no warnings on the compressed trace" "$(cat "$TMP/za.err")" ""
expect_eq "memsim-analyze: the same report as of its records plain" \
    "$(grep -v '^==' "$TMP/za.txt" | md5sum)" "$(grep -v '^==' "$TMP/pa.txt" | md5sum)"
"$A" --no-replay "$p" >"$TMP/pr.txt" 2>/dev/null
expect_eq "memsim-analyze: the plain run's summary is the same" \
    "$(grep '^  allocations:\|^  leaked:' "$TMP/za.txt")" "$(grep '^  allocations:\|^  leaked:' "$TMP/pr.txt")"
expect_grep "memsim-analyze: 30002 allocations" "allocations: *30002 (10000 reallocs)" "$TMP/za.txt"
expect_status "memsim-analyze reads it from a pipe" 0 sh -c "cat '$z' | '$A' --no-replay - >'$TMP/stdin.txt'"
expect_eq "from a pipe: the same report" "$(strip "$TMP/stdin.txt" | md5sum)" \
    "$(strip "$TMP/za.txt" | md5sum)"
expect_status "memsim-analyze reads a directory of .jsonl.zst" 0 "$A" --no-replay "$TMP/z"
expect_grep "the directory's trace is analyzed" "allocations: *30002" "$TMP/out"

# A pattern: .zst after it, unless it ends so.
mkdir -p "$TMP/pat"
timeout "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/pat/run-%p.jsonl" "$PROG/det_heap" >/dev/null
expect_eq "a pattern gets .zst" "$(ls "$TMP/pat" | sed 's/[0-9]*//g')" "run-.jsonl.zst"

# Bad values: one line naming the variable; the program runs untraced.
expect_status "MEMSIM_COMPRESS=maybe: the program still runs" 0 \
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/bad" MEMSIM_COMPRESS=maybe "$PROG/det_heap"
expect_one_line "MEMSIM_COMPRESS=maybe: one line" "$TMP/err"
expect_grep "MEMSIM_COMPRESS=maybe: names it" 'MEMSIM_COMPRESS="maybe"' "$TMP/err"

# ---- size --------------------------------------------------------------------------------

# A many-threaded run: the compressed trace is a fraction of the plain.
trace "$TMP/mz" "$PROG/mt_alloc" >/dev/null
MEMSIM_COMPRESS=0 trace "$TMP/mp" "$PROG/mt_alloc" >/dev/null
zs=$(cat "$TMP"/mz/memsim.mt_alloc.*.zst | wc -c)
ps=$(cat "$TMP"/mp/memsim.mt_alloc.*.jsonl | wc -c)
expect_eq "mt_alloc: compressed under a quarter of plain ($zs vs $ps bytes)" \
    "$([ $((zs * 4)) -lt "$ps" ] && echo yes)" yes
expect_eq "mt_alloc: the same counts either way" \
    "$(counts "$(ls "$TMP"/mz/memsim.mt_alloc.*.zst)" | sed 's/peak=[0-9]* //')" \
    "$(counts "$(ls "$TMP"/mp/memsim.mt_alloc.*.jsonl)" | sed 's/peak=[0-9]* //')"

# ---- a recorder killed ---------------------------------------------------------------------

# recorder_of FILE: the pid of the memsim-recorder that has FILE open for
# writing (only recorders are looked at: a walk of every process's
# descriptors can outlast the traced run on a busy machine).
recorder_of() {
    for c in /proc/[0-9]*/comm; do
        [ "$(cat "$c" 2>/dev/null)" = memsim-recorder ] || continue
        d=${c%/comm}
        for fd in "$d"/fd/*; do
            [ "$(readlink "$fd" 2>/dev/null)" = "$1" ] && { echo "$d" | cut -d/ -f3; return; }
        done
    done
}

"$PROG/alloc_heavy" 2 3000000 >"$TMP/k.plain" 2>&1
echo "status $?" >>"$TMP/k.plain"
mkdir -p "$TMP/k"
K=$(cd "$TMP/k" && pwd)
(trace "$K" "$PROG/alloc_heavy" 2 3000000 >"$TMP/k.out" 2>"$TMP/k.err"; echo "status $?" >>"$TMP/k.out") &
waiter=$!
# Until 100 KiB are written (the trace ends some 60 MB long): however long
# start-up takes on a loaded machine (a fixed 5 s was not always enough:
# the recorder was killed before its first frame, or not found at all).
i=0
while [ $i -lt 1200 ] && [ -z "$(find "$K" -name '*.zst' -size +100k)" ]; do
    sleep 0.05
    i=$((i + 1))
done
kt=$(find "$K" -name '*.zst')
rp=$(recorder_of "$kt")
[ -n "$rp" ] && kill -KILL "$rp"
wait $waiter
expect_eq "recorder killed: found it" "${rp:+yes}" yes
expect_eq "recorder killed: the program's output and status are its own" \
    "$(cat "$TMP/k.out")" "$(cat "$TMP/k.plain")"
expect_eq "recorder killed: one line says the trace may be incomplete" \
    "$(grep -c 'may be incomplete: its recorder did not finish with it' "$TMP/k.err")/$(wc -l <"$TMP/k.err" | tr -d ' ')" 1/1
expect_status "recorder killed: every whole frame reads (tracecheck --truncated)" 0 \
    "$TRACECHECK" --truncated "$kt"
allocs=$(sed -n 's/.* allocs=\([0-9]*\) .*/\1/p' "$TMP/out")
expect_eq "recorder killed: what was flushed is there ($allocs allocations)" \
    "$([ "${allocs:-0}" -gt 1000 ] && echo yes)" yes
"$A" --no-replay "$kt" >"$TMP/ka.txt" 2>"$TMP/ka.err"
expect_eq "recorder killed: memsim-analyze reports it" "$?" 0
expect_one_line "recorder killed: memsim-analyze says truncated in one line" "$TMP/ka.err"
# The kill lands between frames (no end record: truncated) or inside
# one, as the recorder writes a frame in pieces (stops inside a frame).
expect_grep "recorder killed: ... naming the trace and how it ends" \
    "$kt: .*\(no end record: the trace is truncated\|the compressed trace stops inside a frame\)" \
    "$TMP/ka.err"

# ---- the file size limit ------------------------------------------------------------------

# Compressed under ulimit -f: the frames that fit, then the end record,
# counting the rest; one line says so; readers reach the end.
mkdir -p "$TMP/fl"
(ulimit -f 2048; timeout -k 2 "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/fl" \
    "$PROG/alloc_heavy" 1 2000000) >"$TMP/fl.out" 2>"$TMP/fl.err"
expect_eq "ulimit -f: the program's status" "$?" 0
ft=$(find "$TMP/fl" -name '*.zst')
expect_one_line "ulimit -f: one line" "$TMP/fl.err"
expect_grep "ulimit -f: names the limit" \
    "is incomplete: [0-9]* records could not be written (the file size limit, ulimit -f, is reached)" \
    "$TMP/fl.err"
expect_eq "ulimit -f: within the limit" "$([ "$(wc -c <"${ft:-/dev/null}")" -le 1048576 ] && echo yes)" yes
expect_status "ulimit -f: tracecheck reads to the end record" 0 "$TRACECHECK" --dropped-ok "${ft:-/dev/null}"
"$A" --no-replay "${ft:-/dev/null}" >"$TMP/fla.txt" 2>"$TMP/fla.err"
expect_grep "ulimit -f: memsim-analyze says what was dropped" "records could not be written" "$TMP/fla.err"

# ---- damaged files ---------------------------------------------------------------------------

# A trace whose records come slowly is written in few frames (each frame
# starts its compression afresh): sleep's 1.5 s, a sample every 100 ms,
# was some 30 frames of 50 ms; now a frame a second at most, or at 64 KiB.
trace "$TMP/slow" sleep 1.5
slow=$(find "$TMP/slow" -name '*.zst')
frames=$(zstd -lv "$slow" 2>/dev/null | sed -n 's/^# Zstandard Frames: *//p')
expect_eq "a slow trace: a few frames (got ${frames:-none})" \
    "$([ -n "$frames" ] && [ "$frames" -le 5 ] && echo yes)" yes
expect_eq "a slow trace: whole, its samples in" "$("$TRACECHECK" "$slow" >/dev/null 2>&1 && echo ok)/$(zstd -dcq "$slow" | grep -c '"ev":"sample"' | awk '{print ($1 >= 10)}')" ok/1

# Cut in the middle of a frame.
size=$(wc -c <"$z")
head -c $((size - 100)) "$z" >"$TMP/cut.jsonl.zst"
"$A" --no-replay "$TMP/cut.jsonl.zst" >"$TMP/cut.txt" 2>"$TMP/cut.err"
expect_eq "cut: analyzed" "$?" 0
expect_one_line "cut: one line" "$TMP/cut.err"
expect_grep "cut: says the frame stops" "stops inside a frame" "$TMP/cut.err"
expect_status "cut: tracecheck --truncated reads it" 0 "$TRACECHECK" --truncated "$TMP/cut.jsonl.zst"
# A byte flipped: the frame's checksum finds it; what came before reads.
# The trace is made two frames (the recorder's frames are its flushes:
# a run as short as det_heap's may be one), the damage is in the second.
zstd -dcq "$z" >"$TMP/whole.jsonl"
half=$(($(wc -l <"$TMP/whole.jsonl") / 2))
head -n "$half" "$TMP/whole.jsonl" | zstd -qc >"$TMP/bad.jsonl.zst"
first=$(wc -c <"$TMP/bad.jsonl.zst")
tail -n +$((half + 1)) "$TMP/whole.jsonl" | zstd -qc >>"$TMP/bad.jsonl.zst"
second=$(($(wc -c <"$TMP/bad.jsonl.zst") - first))
printf '\377\377\377\377' | dd of="$TMP/bad.jsonl.zst" bs=1 seek=$((first + second / 2)) conv=notrunc 2>/dev/null
"$A" --no-replay "$TMP/bad.jsonl.zst" >"$TMP/bad.txt" 2>"$TMP/bad.err"
expect_eq "damaged: analyzed up to the damage" "$?" 0
expect_one_line "damaged: one line" "$TMP/bad.err"
expect_grep "damaged: names the damage" "cannot read past line [0-9]*: " "$TMP/bad.err"
# Only zstd's magic: not a trace, one line.
printf '\050\265\057\375' >"$TMP/magic.jsonl.zst"
"$A" --no-replay "$TMP/magic.jsonl.zst" >/dev/null 2>"$TMP/magic.err"
expect_one_line "four bytes of magic: one line" "$TMP/magic.err"
# Cut inside the first frame, before any record (7 bytes: the frame's
# header; 100: part of its first block): one line saying it is cut or
# damaged, not "empty", and status 2, as for any file that is no trace.
for cut_at in 7 100; do
    head -c "$cut_at" "$z" >"$TMP/cut$cut_at.jsonl.zst"
    expect_status "cut to $cut_at bytes: status 2" 2 "$A" --no-replay "$TMP/cut$cut_at.jsonl.zst"
    expect_one_line "cut to $cut_at bytes: one line" "$TMP/err"
    expect_grep "cut to $cut_at bytes: named truncated or damaged" \
        "^memsim-analyze: $TMP/cut$cut_at.jsonl.zst: truncated or damaged: its compressed data stops inside the first frame, before the first record$" \
        "$TMP/err"
    expect_eq "cut to $cut_at bytes: no report" "$(wc -c <"$TMP/out" | tr -d ' ')" 0
done
# Damaged inside the first block: zstd cannot decode it.
cp "$z" "$TMP/bad1.jsonl.zst"
printf '\377\377\377\377\377\377\377\377' | dd of="$TMP/bad1.jsonl.zst" bs=1 seek=20 conv=notrunc 2>/dev/null
expect_status "damaged in the first block: status 2" 2 "$A" --no-replay "$TMP/bad1.jsonl.zst"
expect_one_line "damaged in the first block: one line" "$TMP/err"
expect_grep "damaged in the first block: named damaged" \
    "^memsim-analyze: $TMP/bad1.jsonl.zst: damaged: its compressed data cannot be decoded (.*) before the first record$" \
    "$TMP/err"

summary
