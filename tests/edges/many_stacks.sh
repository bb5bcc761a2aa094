# A million distinct call stacks on a flat heap.  memsim's stack table
# in the process is bounded (preload/stacks.c): the program's peak RSS
# stays within the documented bound above its own (docs/preload.md,
# "What memsim still changes in a process"), the trace still holds each
# stack once (the first 4,096, long forgotten in the process when they
# come again, are not written twice), and the analysis finds no drift
# in a heap that does not drift.
if need_program many_stacks; then
    n=1048576
    fresh_out
    untraced "$EDGES/many_stacks" $n "$TMP/hwm.plain" >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$EDGES/many_stacks" $n "$TMP/hwm.traced" >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    same_status "many_stacks" "$st" "$plain"
    expect_same "many_stacks: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_same "many_stacks: same stderr" "$TMP/p.err" "$TMP/t.err"
    # The bound: 20 MiB over the program's own peak (the stack table's
    # 14.5 MiB at most, the ring's 1 MiB, memsim's code and its other
    # tables); 330 MB over it when the table grew with the stacks.
    extra=$(($(cat "$TMP/hwm.traced" 2>/dev/null || echo 999999) - $(cat "$TMP/hwm.plain" 2>/dev/null || echo 0)))
    if [ "$extra" -le 20480 ]; then
        pass "many_stacks: peak RSS within 20 MiB of the program's own ($extra KiB more)"
    else
        fail "many_stacks: peak RSS within 20 MiB of the program's own" "$extra KiB more"
    fi
    f=$(only_trace)
    # 2^20 stacks through the recursion and 3 of main's (stdio, fopen):
    # none twice.
    expect_eq "many_stacks: the trace ends with each stack once" \
        "$(end_field reason "$f"):$(end_field stacks "$f")" "exit:1048579"
    expect_status "many_stacks: the analysis runs" 0 \
        "$BUILD/memsim-analyze" --no-replay --sites 0 "$f"
    expect_eq "many_stacks: no drift found in a flat heap" \
        "$(grep -c 'drift' "$TMP/out"):$(grep -c '^  findings: *none' "$TMP/out")" "0:1"
fi
