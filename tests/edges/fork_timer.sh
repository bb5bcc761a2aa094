# A timer's handler forks while main works (300 rounds of allocations, a
# millisecond's sleep each): the timer fires every 20 ms, and forks once
# main has made a round since the last fork (paced: on a loaded machine a
# traced fork may outlast the interval, and unpaced the program would
# then never end; how long one takes against the interval is measured by
# bench/timing.sh).  It must end as natively, with every record: main's
# 1,200 tagged allocations, one whole trace and one fork record per child.
if need_program fork_timer; then
    fresh_out
    untraced "$EDGES/fork_timer" 20 300 paced >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$EDGES/fork_timer" 20 300 paced >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "fork_timer: natively" "$plain:$(cat "$TMP/p.out")" "0:rounds=300 failed=0"
    same_status "fork_timer" "$st" "$plain"
    expect_same "fork_timer: same stdout" "$TMP/p.out" "$TMP/t.out"
    forks=$(sed -n 's/^forks=\([0-9]*\)$/\1/p' "$TMP/t.err")
    expect_eq "fork_timer: stderr is the program's count alone" \
        "$(grep -cv '^forks=[0-9]*$' "$TMP/t.err")" 0
    check_traces "fork_timer" --tag 4096:777
    expect_eq "fork_timer: a trace per child, and the parent's" "$(ntraces)" "$((${forks:-0} + 1))"
    f=$(trace_of_exe fork_timer)
    expect_eq "fork_timer: main's 1200 tagged allocations, nothing dropped" \
        "$(tc tagged "$f") $(tc dropped "$f")" "1200 0"
    expect_eq "fork_timer: a fork record per child" \
        "$(trace_text "$f" | grep -c '^{"ev":"fork"')" "${forks:-?}"
fi
