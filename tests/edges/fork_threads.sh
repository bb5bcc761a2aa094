# Three threads fork 20 children each, all at once.  glibc runs the fork
# handlers of concurrent forks side by side: each child must get the
# region its own thread reserved, so every one of the 60 traces is there
# and whole, each names its parent's trace, and nothing is printed.
if need_program fork_threads; then
    for run in 1 2 3; do
        pair "fork_threads ($run)" "$EDGES/fork_threads"
        expect_eq "fork_threads ($run): natively" "$PLAIN:$(cat "$TMP/p.out")" "0:forks=60 failed=0"
        expect_eq "fork_threads ($run): 61 traces" "$(ntraces)" 61
        check_traces "fork_threads ($run)" --tag 4096:777
        parent=$(trace_of_exe fork_threads)
        forks=$(trace_text "$parent" | grep -c '^{"ev":"fork"')
        named=0
        for f in "$OUT"/memsim.*.jsonl.zst; do
            [ "$(trace_text "$f" | head -n 1 | "$JSONQ" parent_trace)" = "$parent" ] &&
                named=$((named + 1))
        done
        expect_eq "fork_threads ($run): 60 fork records, 60 children name the parent's trace" \
            "$forks/$named" "60/60"
        inherited=$(for f in "$OUT"/memsim.*.jsonl.zst; do
            trace_text "$f" | grep -c '^\["f",[-0-9]*,[0-9]*,"[0-9a-f]*",1[],]'
        done | awk '{ n += $1 } END { print n }')
        expect_eq "fork_threads ($run): each child freed its parent's block (inherited)" \
            "$inherited" 60
    done
fi
