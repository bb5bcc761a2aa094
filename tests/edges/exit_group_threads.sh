# A raw exit_group while threads allocate: each thread stops wherever it
# is, some inside memsim's post, between its claim and its publish.
# Those posts are calls that never returned to the program, not records
# lost: the trace must count none dropped (the analysis then blamed a
# full disk or the file size limit), and every allocation that returned
# to the program (counted by the program in a shared file) is in it.
if need_program exit_group_threads; then
    eg_threads=16
    for round in 1 2 3; do
        fresh_out
        untraced "$EDGES/exit_group_threads" "$TMP/eg.plain" $eg_threads >"$TMP/p.out" 2>"$TMP/p.err"
        plain=$?
        traced "$EDGES/exit_group_threads" "$TMP/eg.counts" $eg_threads >"$TMP/t.out" 2>"$TMP/t.err"
        st=$?
        same_status "exit_group_threads $round" "$st" "$plain"
        expect_eq "exit_group_threads $round: natively, status 3" "$plain" 3
        f=$(only_trace)
        check_trace "exit_group_threads $round" "$f"
        expect_eq "exit_group_threads $round: the trace ends as vanished, nothing dropped" \
            "$(end_field reason "$f"):$(end_field dropped "$f")" "vanished:0"
        # Allocations per thread (its size) in the trace, against the
        # program's counts: each one that returned is there, and at most
        # one more per thread (posted, the thread stopped before counting).
        od -An -v -t u8 -w8 "$TMP/eg.counts" | awk '{print NR - 1, $1}' >"$TMP/eg.want"
        trace_text "$f" | awk -F, -v n=$eg_threads '
            $1 == "[\"a\"" { s = $5 - 4096; if (s >= 0 && s < n) got[s]++ }
            END { for (i = 0; i < n; i++) print i, got[i] + 0 }' >"$TMP/eg.got"
        bad=$(join "$TMP/eg.want" "$TMP/eg.got" | awk '$3 < $2 || $3 > $2 + 1 { print "thread " $1 ": " $2 " returned, " $3 " in the trace" }')
        expect_eq "exit_group_threads $round: every allocation that returned is in the trace" "$bad" ""
        "$BUILD/memsim-analyze" "$f" >"$TMP/eg.an" 2>"$TMP/eg.anerr"
        expect_eq "exit_group_threads $round: the analysis names no lost records" \
            "$(grep -c 'could not be' "$TMP/eg.anerr")" 0
    done
fi
