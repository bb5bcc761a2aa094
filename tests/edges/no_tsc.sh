# A program turns the TSC off for itself (prctl PR_SET_TSC,
# PR_TSC_SIGSEGV), which also makes the vDSO's clock_gettime fault; its
# threads and its fork's child inherit it (a program it execs too, but
# the loader faults there natively).
# memsim reads no clock in any of them (their time is the recorder's):
# the same output and status, and every pair in the traces.
if need_program no_tsc; then
    n=20000
    pair "no_tsc" "$EDGES/no_tsc" $n
    expect_eq "no_tsc: natively, exit 0 and four checksums" \
        "$PLAIN:$(cut -d' ' -f1 "$TMP/p.out" | tr '\n' ' ')" "0:main thread child "
    # Every trace of the tree: the process (main and thread), the fork's
    # child.
    pairs=0
    now=$(date +%s)
    for f in "$OUT"/memsim.no_tsc.*.jsonl.zst; do
        check_trace "no_tsc $(basename "$f")" "$f"
        # A wall clock at start even where the process could not read one
        # (the fork's child: the recorder's): within the last 10 minutes.
        start=$(trace_text "$f" | head -n 1 | "$JSONQ" start_unix_ns)
        expect_eq "no_tsc $(basename "$f"): start_unix_ns is now's" \
            "$(echo "${start:-0} $now" | awk '{d = $2 - $1 / 1e9; print (d >= -5 && d < 600)}')" 1
        pairs=$((pairs + $(trace_text "$f" | grep -c '^\["f"')))
    done
    expect_eq "no_tsc: the traces hold the frees of every pair (3 x $n, and more)" \
        "$([ "$pairs" -ge $((3 * n)) ] && echo yes)" yes
fi
