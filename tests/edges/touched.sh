# The pages a program touched of its large blocks (64 KiB and more):
# counted before each free or realloc (mincore in the process) and, for
# the blocks live at the end, from /proc/PID/pagemap by the recorder; a
# replay through a real allocator writes only as many.  A 1 MiB block
# written on 3 whole pages and freed, one written on 7 and kept, one
# written on 5 and grown by realloc: the trace says 3, 7 and 5 exactly,
# and glibc's replay of the first program holds some pages, not the 2
# MiB it held when every block was written in full.
if need_program touched; then
    pair "touched" "$EDGES/touched"
    f=$(only_trace)
    check_trace "touched" "$f"
    expect_eq "touched: the free of the block written on 3 pages says 3" \
        "$(trace_text "$f" | grep -c '^\["f",[^,]*,[^,]*,"[0-9a-f]*",0,"free",3\]$')" 1
    expect_eq "touched: the block kept to the end was written on 7 pages" \
        "$(trace_text "$f" | grep '"ev":"touched"' | "$JSONQ" pages)" 7
    expect_eq "touched: no other free counts pages (the 16 KiB block is under 64 KiB)" \
        "$(trace_text "$f" | grep -c '^\["f",.*,"free",[0-9]*\]$')" 1
    A=$BUILD/memsim-analyze
    if [ -x "$A" ] && [ -x "$BUILD/memsim-replay" ]; then
        "$A" --json --sites 0 --allocators glibc "$f" >"$TMP/touched.json" 2>"$TMP/touched.err"
        peak=$("$JSONQ" allocators.rows.0.peak_rss_bytes <"$TMP/touched.json")
        # 10 whole pages and the two head pages glibc writes, and the
        # kernel's counters' lag: far from the 2 MiB of both blocks
        if [ "${peak:-0}" -gt 0 ] && [ "$peak" -le 262144 ]; then
            pass "touched: glibc's replay holds $peak bytes at its peak, not 2 MiB"
        else
            fail "touched: glibc's replay writes only the pages touched" \
                "peak ${peak:-none} bytes, want at most 256 KiB ($(head -c 200 "$TMP/touched.err"))"
        fi
        # --allocators-pages all: every page written, as the strategies
        # count every requested byte: nearly the 2 MiB of the two blocks
        # live at once (the baseline and the counters' lag take a little)
        "$A" --json --sites 0 --allocators glibc --allocators-pages all "$f" >"$TMP/touched.all.json" \
            2>"$TMP/touched.all.err"
        all=$("$JSONQ" allocators.rows.0.peak_rss_bytes <"$TMP/touched.all.json")
        if [ "${all:-0}" -ge 1572864 ]; then
            pass "touched: with --allocators-pages all, glibc's replay holds $all bytes, near the 2 MiB of both"
        else
            fail "touched: --allocators-pages all writes every page" \
                "peak ${all:-none} bytes, want 1.5 MiB or more ($(head -c 200 "$TMP/touched.all.err"))"
        fi
        expect_eq "touched: the JSON says which pages the replays wrote" \
            "$("$JSONQ" allocators.pages <"$TMP/touched.json") $("$JSONQ" allocators.pages <"$TMP/touched.all.json")" \
            "touched all"
        expect_status "touched: --allocators-pages some is refused" 2 \
            "$A" --allocators glibc --allocators-pages some "$f"
        expect_one_line "touched: --allocators-pages some: one line" "$TMP/err"
        expect_grep "touched: --allocators-pages some: the line names it" \
            '--allocators-pages: "some" is neither touched nor all' "$TMP/err"
    else
        fail "touched: the replay" "$A or memsim-replay is missing (make all builds them)"
    fi
    pair "touched realloc" "$EDGES/touched" realloc
    f=$(only_trace)
    check_trace "touched realloc" "$f"
    expect_eq "touched realloc: the realloc says the old block was written on 5 pages" \
        "$(trace_text "$f" | grep -c '^\["r",.*,0,"reallocarray",5\]$')" 1
    # jemalloc ahead of memsim: its reallocarray (jemalloc has none) comes
    # to memsim's hook with jemalloc's block, which glibc's
    # malloc_usable_size must not be asked about (it read before the block
    # and could fault): not counted, and the program runs as natively.
    JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
    if [ -e "$JE" ]; then
        fresh_out
        untraced "$EDGES/touched" realloc >"$TMP/p.out" 2>/dev/null
        plain=$?
        bad=0
        for i in 1 2 3 4 5 6 7 8; do
            timeout -k 2 "$LIMIT" env LD_PRELOAD="$JE:$LIB" MEMSIM_OUTPUT="$OUT" "$EDGES/touched" realloc \
                >"$TMP/t.out" 2>/dev/null
            st=$?
            { [ "$st" = "$plain" ] && cmp -s "$TMP/p.out" "$TMP/t.out"; } || bad=$((bad + 1))
        done
        expect_eq "touched, jemalloc ahead: 8 runs as natively" "$bad" 0
        n=0
        for f in "$OUT"/memsim.*.jsonl.zst; do
            [ -e "$f" ] && n=$((n + $(trace_text "$f" | grep -c '^\["[fr]",.*,"[a-z]*",[0-9]*\]$')))
        done
        expect_eq "touched, jemalloc ahead: no block counted" "$n" 0
    else
        echo "# skip - touched, jemalloc ahead: libjemalloc2 is not installed"
    fi
fi
