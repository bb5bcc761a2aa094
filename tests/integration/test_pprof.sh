# memsim-analyze --pprof FILE: a gzipped profile.proto that go tool pprof
# (Debian's golang-go) reads back with the same top function and bytes as
# memsim's own report; its sample types, functions and file:line.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - --pprof of a real run: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi

mkdir -p "$TMP/run"
expect_status "sites under the preload" 0 env LD_PRELOAD="$BUILD/libmemsim.so" \
    MEMSIM_OUTPUT="$TMP/run" "$BUILD/programs/sites"
T=$(ls "$TMP"/run/memsim.sites.*)
expect_status "--pprof" 0 "$A" --pprof "$TMP/heap.pb.gz" "$T"
expect_eq "one line says where" "$(cat "$TMP/err")" "memsim-analyze: the profile is in $TMP/heap.pb.gz"
expect_eq "gzipped" "$(head -c 2 "$TMP/heap.pb.gz" | od -An -tx1 | tr -d ' ')" 1f8b
expect_status "memsim's own report" 0 "$A" --json --no-replay "$T"
cp "$TMP/out" "$TMP/report.json"
peak=$("$J" sites.0.peak_bytes <"$TMP/report.json")
fn=$("$J" sites.0.frames.0.function <"$TMP/report.json")
line=$(grep -n 'sites: the leak' tests/programs/sites.c | cut -d: -f1)
# The same from memsim-analyze -o pprof=FILE, beside the text.
expect_status "-o pprof=FILE with the text" 0 "$A" --no-replay -o pprof="$TMP/o.pb.gz" -o text="$TMP/o.txt" "$T"
expect_eq "both written" "$(head -c 2 "$TMP/o.pb.gz" | od -An -tx1 | tr -d ' '):$(grep -c '^== ' "$TMP/o.txt")" 1f8b:1

if ! command -v go >/dev/null 2>&1; then
    echo "# skip - go tool pprof: go is not installed (Debian package golang-go)"
    summary
    exit $?
fi
export HOME="$TMP" PPROF_TMPDIR="$TMP" GOFLAGS=-mod=mod
pp() { go tool pprof "$@" "$TMP/heap.pb.gz" 2>"$TMP/pp.err"; }
pp -raw >"$TMP/raw"
expect_eq "its sample types, inuse_space the default" "$(sed -n '/^Samples:/{n;p}' "$TMP/raw" | tr -s ' ' | sed 's/^ //')" \
    "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt] leaked_objects/count leaked_space/bytes"
top() { sed -n '/flat%/{n;p}' | tr -s ' ' | sed 's/^ //'; }
expect_eq "go tool pprof -top: memsim's top function and its bytes at the peak (inuse_space, the default)" \
    "$(pp -top -unit=B | top)" "${peak}B $(awk "BEGIN{printf \"%.2f%%\", 100*$peak/$("$J" summary.peak_heap_bytes <"$TMP/report.json")}") $(awk "BEGIN{printf \"%.2f%%\", 100*$peak/$("$J" summary.peak_heap_bytes <"$TMP/report.json")}") ${peak}B $(awk "BEGIN{printf \"%.2f%%\", 100*$peak/$("$J" summary.peak_heap_bytes <"$TMP/report.json")}") $fn"
expect_eq "the total: the peak heap" "$(pp -top -unit=B | sed -n 's/.*Total samples = \([0-9]*\)B.*/\1/p')" \
    "$("$J" summary.peak_heap_bytes <"$TMP/report.json")"
expect_eq "its file:line" "$(pp -top -lines -unit=B | top | awk '{print $6 " " $7}' | sed 's| /.*/| |')" \
    "$fn sites.c:$line"
expect_eq "leaked_space: the leak" "$(pp -top -unit=B -sample_index=leaked_space | top | awk '{print $1 " " $6}')" \
    "$("$J" summary.leaked_bytes <"$TMP/report.json")B $fn"
expect_eq "alloc_objects: churn's 1000 calls first, then leak_here's 300" \
    "$(pp -top -sample_index=alloc_objects | sed -n '/flat%/{n;p;n;p}' | awk '{print $1 " " $6}' | tr '\n' '/')" \
    "1000 churn/300 leak_here/"
expect_eq "go tool pprof said nothing else" "$(grep -v '^$' "$TMP/pp.err")" ""

summary
