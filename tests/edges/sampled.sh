# A sampled trace (MEMSIM_SAMPLE_BYTES=64K) of 4 threads that make 8
# million allocations of 64 bytes and 200 of 4 MiB through every
# allocating function, with frees across threads and 16 MiB leaked.
# The program runs as it does plainly; the trace holds every block of
# 4 MiB (64 times the interval: always sampled) and the realloc of two
# sampled blocks, exactly; the number of blocks of 64 bytes sampled is
# within 5 standard errors of 8,000,000 x (1 - e^(-64/65536)); no free
# is taken for an unknown one; the program's leak is exact (its blocks
# were certain to be sampled: their weight is their size).  The C
# runtime keeps blocks of its own live too (stdout's buffer, each
# thread's TLS vector of 304 bytes), sampled by chance (about 1 run in
# 12): the end record's estimates are then above the program's leak, and
# must equal what the trace's live records weigh (sums of w and 1 / p).
if need_program sampled; then
    TRACE_ENV="MEMSIM_SAMPLE_BYTES=64K"
    pair "sampled" "$EDGES/sampled" 4 2000000
    TRACE_ENV=
    f=$(only_trace)
    check_trace "sampled" "$f"
    expect_eq "sampled: the meta record names the interval" \
        "$(trace_text "$f" | head -n 1 | "$JSONQ" sample_bytes)" 65536
    expect_eq "sampled: no error records, nothing dropped" "$(tc errors "$f"):$(tc dropped "$f")" "0:0"
    expect_eq "sampled: every block of 4 MiB is recorded" \
        "$(trace_text "$f" | grep -c '^\["a",[^,]*,[^,]*,"[0-9a-f]*",4194304,')" 200
    expect_eq "sampled: the realloc of two sampled blocks" \
        "$(trace_text "$f" | grep -c '^\["r",[^,]*,[^,]*,"[0-9a-f]*","[0-9a-f]*",8388608,')" 1
    n=$(trace_text "$f" | grep -c '^\["a",[^,]*,[^,]*,"[0-9a-f]*",64,')
    # mean 7808.6, standard deviation 88.3
    if [ "$n" -ge 7367 ] && [ "$n" -le 8250 ]; then
        pass "sampled: $n blocks of 64 bytes sampled (expected 7809 +- 88)"
    else
        fail "sampled: the blocks of 64 bytes sampled" "$n, not within 5 standard errors of 7809"
    fi
    # The blocks the records leave live: "BIG BIG_BYTES EST_BYTES EST_BLOCKS SMALL"
    # (BIG: of 1 MiB or more, the program's; SMALL: the runtime's, sampled).
    read -r big bigb eb en small <<EOF
$(trace_text "$f" | awk -v N=65536 -F, '
        /^\["a",/ { gsub(/"/, "", $4); live[$4] = $5 + 0; next }
        /^\["f",/ { gsub(/[]"]/, "", $4); delete live[$4]; next }
        /^\["r",/ { gsub(/"/, "", $4); gsub(/"/, "", $5); delete live[$4]; live[$5] = $6 + 0 }
        END {
            for (a in live) {
                s = live[a]; p = 1 - exp(-s / N); eb += s / p; en += 1 / p
                if (s >= 1048576) { big++; bigb += s } else small++
            }
            printf "%d %d %.0f %.0f %d\n", big, bigb, eb, en, small
        }')
EOF
    expect_eq "sampled: the program's leak, exactly" "$big:$bigb" "3:16777216"
    expect_eq "sampled: the end record's estimates are the live records' weights" \
        "$(end_field live_allocations "$f"):$(end_field live_bytes "$f"):$(end_field unknown_frees "$f")" \
        "$en:$eb:0"
    expect_status "sampled: the analysis runs" 0 "$BUILD/memsim-analyze" --sites 0 "$f"
    if [ "$small" = 0 ]; then
        expect_grep "sampled: and says the leak is exact" "^  leaked: *16.0 MiB ± 0 B$" "$TMP/out"
    else
        expect_grep "sampled: and gives the runtime's $small sampled block(s) their error" \
            "^  leaked: *16.[01] MiB ± [1-9][0-9.]* KiB$" "$TMP/out"
    fi
fi
# Under another allocator (jemalloc, preloaded after memsim): the fast
# path of an unsampled call keeps the guard around the real one, so the
# mappings jemalloc makes for itself through the program's mmap are not
# taken for the program's (glibc's allocator calls nothing that way: its
# fast path is a bare tail call).  alloc_heavy maps nothing itself.
JE=$(ls /usr/lib/*-linux-gnu/libjemalloc.so.2 /lib/*-linux-gnu/libjemalloc.so.2 2>/dev/null | head -n 1)
if [ -z "$JE" ]; then
    echo "# skip - sampled under jemalloc: libjemalloc.so.2 is not installed"
elif [ -x "$BUILD/programs/alloc_heavy" ]; then
    for t in 1G 512K; do
        fresh_out
        untraced env LD_PRELOAD="$JE" "$BUILD/programs/alloc_heavy" 2 100000 >"$TMP/p.out" 2>&1
        plain=$?
        TRACE_ENV="MEMSIM_SAMPLE_BYTES=$t LD_PRELOAD=$LIB:$JE"
        traced "$BUILD/programs/alloc_heavy" 2 100000 >"$TMP/t.out" 2>&1
        st=$?
        TRACE_ENV=
        same_status "sampled at $t under jemalloc" "$st" "$plain"
        expect_same "sampled at $t under jemalloc: same output" "$TMP/p.out" "$TMP/t.out"
        f=$(only_trace)
        check_trace "sampled at $t under jemalloc" "$f"
        expect_eq "sampled at $t under jemalloc: none of jemalloc's own mappings recorded" \
            "$(trace_text "$f" | grep -c '"ev":"mmap"')" 0
    done
    expect_eq "sampled at 512K under jemalloc: its allocations are (about 800)" \
        "$([ "$(trace_text "$f" | grep -c '^\["a",')" -gt 400 ] && echo some)" some
else
    fail "sampled under jemalloc" "$BUILD/programs/alloc_heavy is missing (make integration builds it)"
fi
