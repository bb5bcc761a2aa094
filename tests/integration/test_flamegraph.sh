# memsim-analyze --flamegraph FILE: one self-contained SVG flame graph,
# no flamegraph.pl needed: well-formed XML, nothing fetched, no script,
# every name escaped, the weights those of --collapsed; bad input.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze

# A hand-made trace (SANITIZE=1 too): two stacks, the second's frame
# name is markup; 3 calls, 600 bytes live at the peak, 300 leaked.
cat >"$TMP/t.jsonl" <<'EOT'
{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":42,"ppid":1,"exe":"/bin/<x&y>","argv":["x"],"start_unix_ns":0,"page_size":4096,"strategy":"none","device_size":1048576,"stack_depth":64,"mmap":true,"memsim_version":"0.1.0","parent_trace":null}
{"ev":"stack","t":1,"tid":1,"id":1,"frames":[4096,8192]}
{"ev":"stack","t":1,"tid":1,"id":2,"frames":[12288,8192]}
{"ev":"alloc","t":2,"tid":1,"fn":"malloc","addr":4096,"size":100,"align":16,"stack":1,"sim":null}
{"ev":"alloc","t":3,"tid":1,"fn":"malloc","addr":8192,"size":200,"align":16,"stack":1,"sim":null}
{"ev":"alloc","t":4,"tid":1,"fn":"malloc","addr":12288,"size":300,"align":16,"stack":2,"sim":null}
{"ev":"free","t":5,"tid":1,"fn":"free","addr":4096,"size":100,"stack":1}
{"ev":"free","t":6,"tid":1,"fn":"free","addr":8192,"size":200,"stack":1}
{"ev":"end","t":9,"tid":1,"reason":"exit","status":0,"signal":null,"records":9,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":1,"live_bytes":300,"stacks":2}
EOT
F=$TMP/f.svg
expect_status "--flamegraph FILE: exit 0" 0 "$A" --flamegraph "$F" "$TMP/t.jsonl"
expect_eq "--flamegraph: says where, one line" "$(cat "$TMP/err")" "memsim-analyze: the flame graph is in $F"
expect_eq "--flamegraph: nothing on stdout" "$(wc -c <"$TMP/out" | tr -d ' ')" 0
expect_eq "an SVG document" "$(head -n 1 "$F"):$(tail -n 1 "$F")" \
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>:</svg>'
expect_grep "the SVG namespace" '<svg xmlns="http://www.w3.org/2000/svg"' "$F"
expect_eq "nothing from outside: the namespace is the only address" \
    "$(grep -o 'http[s]*://[^"]*' "$F" | sort -u | tr '\n' ' ')" "http://www.w3.org/2000/svg "
expect_eq "no script, no link" "$(grep -c '<script\|href=' "$F")" 0
expect_eq "the exe's name escaped" "$(grep -c '/bin/&lt;x&amp;y&gt;' "$F"):$(grep -c '<x&y>' "$F")" "2:0"
expect_grep "the root weighs the live bytes at the peak" '<title>all — 600 B (100.0%)</title>' "$F"
if command -v xmllint >/dev/null 2>&1; then
    expect_status "well-formed XML (xmllint)" 0 xmllint --noout "$F"
elif command -v python3 >/dev/null 2>&1; then
    expect_status "well-formed XML (python3)" 0 python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$F"
else
    echo "# skip - well-formed XML: neither xmllint nor python3"
fi
# The same stacks and weights as --collapsed: the root is their sum.
expect_status "--flamegraph - --flamegraph-weight calls: on stdout" 0 \
    "$A" --flamegraph - --flamegraph-weight calls "$TMP/t.jsonl"
calls=$("$A" --collapsed=calls "$TMP/t.jsonl" | awk '{ s += $NF } END { print s }')
expect_grep "calls: the root is --collapsed=calls's sum ($calls)" "<title>all calls — $calls (100.0%)</title>" "$TMP/out"
expect_eq "--flamegraph -: nothing on stderr" "$(cat "$TMP/err")" ""
"$A" --flamegraph "$TMP/l.svg" --flamegraph-weight leaked "$TMP/t.jsonl" 2>/dev/null
expect_grep "leaked: the root is the leak" '<title>all — 300 B (100.0%)</title>' "$TMP/l.svg"
"$A" --flamegraph "$TMP/m.svg" --flamegraph-weight mapped "$TMP/t.jsonl" 2>/dev/null
expect_grep "mapped, none: says so" 'nothing to weigh: no stack has bytes of the program' "$TMP/m.svg"

# Bad input: exit 2, one line each, no file.
bad() { # NAME MESSAGE ARGS...
    name=$1 msg=$2
    shift 2
    expect_status "refuses $name" 2 "$A" "$@" "$TMP/t.jsonl"
    expect_eq "$name: one line" "$(cat "$TMP/err")" "$msg"
}
bad "a weight that is none" 'memsim-analyze: --flamegraph-weight: "bogus" is not a weight (peak, calls, leaked, mapped)' \
    --flamegraph "$TMP/x.svg" --flamegraph-weight bogus
bad "a weight without --flamegraph" 'memsim-analyze: --flamegraph-weight needs --flamegraph' --flamegraph-weight calls
bad "--flamegraph with --json" 'memsim-analyze: --flamegraph excludes --json, --html and --collapsed' \
    --flamegraph "$TMP/x.svg" --json
bad "--flamegraph with --collapsed" 'memsim-analyze: --flamegraph excludes --json, --html and --collapsed' \
    --flamegraph "$TMP/x.svg" --collapsed
bad "an empty file name" 'memsim-analyze: --flamegraph: an empty file name' --flamegraph ''
expect_eq "no file left by bad input" "$(test -e "$TMP/x.svg" && echo there)" ""
expect_status "into a missing directory: exit 2" 2 "$A" --flamegraph "$TMP/nope/f.svg" "$TMP/t.jsonl"
expect_one_line "into a missing directory: one line" "$TMP/err"

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - the flame graph of a real run: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi

# A real program: its functions, symbolized, and a tree's processes.
D=$TMP/run
"$MEMSIM" run --out "$D" -- sh -c "$BUILD/programs/det_heap >/dev/null" >/dev/null 2>&1
expect_status "a real run's flame graph" 0 "$MEMSIM" analyze --flamegraph "$TMP/r.svg" "$D"
expect_grep "its main" '<title>main — ' "$TMP/r.svg"
expect_grep "a process of the tree, a level of its own" '<title>det_heap:[0-9]* — ' "$TMP/r.svg"
if command -v xmllint >/dev/null 2>&1; then
    expect_status "a real run's: well-formed XML" 0 xmllint --noout "$TMP/r.svg"
fi

summary
