# A mapping grown with mremap to 1 GiB, 48 MiB of it touched, then given
# back with MADV_DONTNEED: the program runs as natively, and the analysis
# of what the RSS was made of at its top adds up to the RSS (before, the
# mappings' part was the 1 GiB they spanned, over an RSS of 60 MiB).
if need_program mremap_dontneed; then
    TRACE_ENV=MEMSIM_SAMPLE_MS=10
    pair "mremap_dontneed" "$EDGES/mremap_dontneed"
    TRACE_ENV=
    expect_eq "mremap_dontneed: natively" "$PLAIN:$(cat "$TMP/p.out")" "0:mapped=1024MiB touched=48MiB"
    f=$(only_trace)
    check_trace "mremap_dontneed" "$f" --expect-end exit
    "$BUILD/memsim-analyze" --no-replay --json "$f" >"$TMP/md.json" 2>"$TMP/md.err"
    "$BUILD/memsim-analyze" --no-replay "$f" >"$TMP/md.txt" 2>/dev/null
    rt() { "$JSONQ" "summary.rss_at_top.$1" <"$TMP/md.json" 2>/dev/null; }
    rss=$(rt rss_bytes)
    parts=$(($(rt allocator_bytes) + $(rt mapped_bytes) + $(rt file_pages_bytes) + $(rt other_bytes)))
    expect_eq "mremap_dontneed: the RSS at its top is its parts' sum" "$parts" "${rss:-?}"
    expect_eq "mremap_dontneed: the mappings' part within the RSS" \
        "$([ "$(rt mapped_bytes)" -le "${rss:-0}" ] && echo yes)" yes
    # The top is sampled while the 1 GiB mapping holds 48 MiB (300 ms,
    # a sample every 10 ms): the report names both figures.
    if [ "$(rt mapped_span_bytes)" = $((1024 << 20)) ]; then
        expect_grep "mremap_dontneed: the text gives the mappings' part and their span" \
            "^  RSS at its top: .*, [0-9.]* MiB the program's mappings (of 1.00 GiB mapped), " "$TMP/md.txt"
    else
        echo "# the RSS's top was sampled outside the hold (mapped $(rt mapped_span_bytes))"
    fi
fi
