# A timer's handler forks every 20 ms while main works (300 rounds of
# allocations, a millisecond's sleep each).  A traced fork that costs
# more than the interval leaves main no time, and the program never ends:
# it must end as natively (within three times the native run, and 2 s),
# with every record: main's 1,200 tagged allocations, one whole trace and
# one fork record per child.
if need_program fork_timer; then
    fresh_out
    t0=$(ms_now)
    untraced "$EDGES/fork_timer" 20 300 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    t1=$(ms_now)
    traced "$EDGES/fork_timer" 20 300 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    t2=$(ms_now)
    expect_eq "fork_timer: natively" "$plain:$(cat "$TMP/p.out")" "0:rounds=300 failed=0"
    same_status "fork_timer" "$st" "$plain"
    expect_same "fork_timer: same stdout" "$TMP/p.out" "$TMP/t.out"
    nat=$((t1 - t0)) tr=$((t2 - t1))
    expect_eq "fork_timer: ends as natively (${tr} ms traced, ${nat} ms natively)" \
        "$([ "$tr" -le $((3 * nat + 2000)) ] && echo yes)" yes
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
