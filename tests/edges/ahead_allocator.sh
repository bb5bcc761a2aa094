# jemalloc or tcmalloc preloaded ahead of libmemsim.so: memsim's malloc is
# never called, and memsim says so in one line for the whole tree, not
# once per process: a shell running two commands, and bash replacing
# itself with its last command (exec, the same process), each print it
# once.  Every trace's meta record still carries the note.  Skipped
# where neither library is installed (Debian packages libjemalloc2,
# libtcmalloc-minimal4).
ahead_case() { # NAME LIBRARY SHELL SCRIPT
    fresh_out
    untraced "$3" -c "$4" >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    timeout -k 2 "$LIMIT" env LD_PRELOAD="$2:$LIB" MEMSIM_OUTPUT="$OUT" "$3" -c "$4" \
        >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_same "$1: same stdout" "$TMP/p.out" "$TMP/t.out"
    same_status "$1" "$st" "$plain"
    expect_eq "$1: one line on stderr, memsim's, naming the library" \
        "$(wc -l <"$TMP/t.err" | tr -d ' ') $(grep -c "^memsim: malloc is $2's, found ahead of libmemsim.so" "$TMP/t.err")" \
        "1 1"
    n=0 noted=0
    for f in "$OUT"/memsim.*.jsonl.zst; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        trace_text "$f" | head -n 1 | "$JSONQ" note 2>/dev/null | grep -q 'found ahead' &&
            noted=$((noted + 1))
    done
    expect_eq "$1: every trace's meta record has the note ($n traces)" \
        "$([ "$n" -ge 2 ] && echo "$noted")" "$n"
}

for ahead in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
    /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4; do
    lib_name=$(basename "$ahead")
    if [ ! -e "$ahead" ]; then
        echo "# skip - ahead_allocator: $ahead is not installed"
        continue
    fi
    ahead_case "$lib_name ahead, sh and its child" "$ahead" sh 'ls / >/dev/null; echo done'
    ahead_case "$lib_name ahead, bash exec'ing its command" "$ahead" bash 'echo one; /bin/echo two'
done
