# 500 threads allocating at once on a machine of a few cores: some are
# always preempted inside memsim's post, and every other thread used to
# wait behind them for room in the ring (12 million calls: past a minute
# traced, against 1.7 s natively; 5.7 s now).  Same output and status,
# traces that pass tracecheck, every allocation and realloc of every
# thread in the trace (each thread's sizes are its own), in the time
# limit.
if need_program hundreds_of_threads; then
    fresh_out
    untraced "$EDGES/hundreds_of_threads" 500 8000 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$EDGES/hundreds_of_threads" 500 8000 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "hundreds_of_threads: natively, exit 0" "$plain" 0
    same_status "hundreds_of_threads" "$st" "$plain"
    expect_same "hundreds_of_threads: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_same "hundreds_of_threads: same stderr" "$TMP/p.err" "$TMP/t.err"
    check_traces "hundreds_of_threads"
    f=$(only_trace)
    expect_eq "hundreds_of_threads: the trace ends at exit, nothing dropped" \
        "$(end_field reason "$f"):$(end_field dropped "$f")" "exit:0"
    bad=$(trace_text "$f" | awk -F, '
        $1 == "[\"a\"" && $5 >= 20000 && $5 < 20500 { a[$5 - 20000]++ }
        $1 == "[\"r\"" && $6 >= 20500 && $6 < 21000 { r[$6 - 20500]++ }
        END { for (i = 0; i < 500; i++) if (a[i] != 8000 || r[i] != 8000)
                  print "thread " i ": " a[i] + 0 " allocs, " r[i] + 0 " reallocs" }' | head -n 3)
    expect_eq "hundreds_of_threads: every thread's allocations and reallocs are in the trace" \
        "$bad" ""
fi
