# memsim-analyze --allocators: a trace's heap operations replayed through
# real allocators (glibc's, and jemalloc, mimalloc and tcmalloc where
# installed), each in a memsim-replay process of its own.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ
PROG=$BUILD/programs
for need in "$A" "$BUILD/memsim-replay" "$J"; do
    [ -x "$need" ] || { fail "setup" "$need is missing (make integration builds it)"; summary; exit; }
done

# The allocators of the catalog that are installed here (glibc always).
ALL=glibc
for a in jemalloc:libjemalloc.so.2 mimalloc:libmimalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4; do
    if ls /usr/lib/*-linux-gnu/"${a#*:}" /lib/*-linux-gnu/"${a#*:}" >/dev/null 2>&1; then
        ALL="$ALL,${a%%:*}"
    else
        echo "# skip - ${a%%:*} is not installed: its rows are not checked"
    fi
done
NALL=$(echo "$ALL" | tr ',' '\n' | wc -l)

# A trace with known operations on two threads: a 16 MiB malloc, a
# calloc, three aligned kinds, the 16 MiB block freed by the other thread
# (a window of its own: the two threads must not run it at once), the
# calloc'd block grown to 8 MiB by realloc and freed.
cat >"$TMP/known.jsonl" <<'EOT'
{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":42,"ppid":1,"exe":"/bin/known","argv":["known"],"start_unix_ns":0,"page_size":4096,"strategy":"best-fit","device_size":1073741824,"stack_depth":64,"mmap":true,"memsim_version":"0.1.0","parent_trace":null}
{"ev":"stack","t":1,"tid":1,"id":1,"frames":[4096]}
{"ev":"alloc","t":2,"tid":1,"fn":"malloc","addr":4096,"size":16777216,"align":16,"stack":1,"sim":null}
{"ev":"alloc","t":3,"tid":1,"fn":"calloc","addr":40960000,"size":1000,"align":16,"stack":1,"sim":null}
{"ev":"alloc","t":4,"tid":2,"fn":"posix_memalign","addr":81920000,"size":5000,"align":4096,"stack":1,"sim":null}
{"ev":"alloc","t":5,"tid":2,"fn":"aligned_alloc","addr":81960000,"size":64,"align":64,"stack":1,"sim":null}
{"ev":"alloc","t":6,"tid":2,"fn":"memalign","addr":82000000,"size":100,"align":256,"stack":1,"sim":null}
{"ev":"free","t":7,"tid":2,"fn":"free","addr":4096,"size":16777216,"stack":1}
{"ev":"realloc","t":8,"tid":1,"fn":"realloc","old_addr":40960000,"addr":50000000,"old_size":1000,"size":8388608,"stack":1,"sim":null}
{"ev":"free","t":9,"tid":1,"fn":"free","addr":50000000,"size":8388608,"stack":1}
{"ev":"end","t":10,"tid":1,"reason":"exit","status":0,"signal":null,"records":10,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":3,"live_bytes":5164,"stacks":1}
EOT
expect_status "no --allocators: no replay through real allocators" 0 "$A" --json --sites 0 "$TMP/known.jsonl"
expect_eq "allocators is null without --allocators" "$("$J" allocators <"$TMP/out")" null
expect_status "--allocators $ALL on a known trace" 0 "$A" --json --sites 0 --allocators "$ALL" "$TMP/known.jsonl"
cp "$TMP/out" "$TMP/known.json"
expect_eq "nothing on stderr" "$(cat "$TMP/err")" ""
q() { "$J" "$1" <"$TMP/known.json"; }
expect_eq "8 operations" "$(q allocators.operations)" 8
expect_eq "2 threads" "$(q allocators.threads)" 2
expect_eq "the free by the other thread starts a window" "$(q allocators.windows)" 2
expect_eq "a row per allocator" "$(q allocators.rows.#)" "$NALL"
expect_eq "the program ran with glibc" "$(q allocators.ran_with)" glibc
i=0
while [ "$i" -lt "$NALL" ]; do
    name=$(q allocators.rows.$i.name)
    expect_eq "$name: replayed" "$(q allocators.rows.$i.status)" ok
    expect_eq "$name: every operation" "$(q allocators.rows.$i.operations)" 8
    expect_eq "$name: no request refused" "$(q allocators.rows.$i.failed_requests)" 0
    expect_eq "$name: nothing substituted (the trace has no pvalloc)" "$(q allocators.rows.$i.substituted.#)" 0
    # the 16 MiB block is written in every page: the peak holds it (the
    # kernel's RSS counters may lag by some pages per thread)
    peak=$(q allocators.rows.$i.peak_rss_bytes)
    if [ "$peak" -ge 16252928 ] && [ "$peak" -le 33554432 ]; then pass "$name: peak RSS holds the 16 MiB block ($peak)"; else
        fail "$name: peak RSS holds the 16 MiB block" "$peak, want 15.5 to 32 MiB"
    fi
    i=$((i + 1))
done
expect_eq "the ranking: allocators and strategies" "$(q allocators.ranking.#)" "$((NALL + 6))"
expect_eq "the ranking's first is the best" "$(q allocators.ranking.0.over_best_bytes)" 0

# The trace's main thread is replayed on the replay's main thread: glibc
# gives that thread its main arena, grown by brk, and the others mapped
# arenas.  A trace whose main thread (tid == pid) keeps 2 MiB of 8 KiB
# blocks and whose second thread allocates once: the replay's break must
# grow by those 2 MiB, and only its main thread may move it.
if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true 2>/dev/null; then
    awk 'BEGIN {
        print "{\"ev\":\"meta\",\"t\":0,\"tid\":42,\"format\":\"memsim-trace\",\"version\":1,\"pid\":42,\"ppid\":1,\"exe\":\"/bin/two\",\"argv\":[\"two\"],\"start_unix_ns\":0,\"page_size\":4096,\"strategy\":\"best-fit\",\"device_size\":1073741824,\"stack_depth\":64,\"mmap\":true,\"memsim_version\":\"0.1.0\",\"parent_trace\":null}"
        print "{\"ev\":\"stack\",\"t\":1,\"tid\":42,\"id\":1,\"frames\":[4096]}"
        for (i = 0; i < 256; i++)
            printf "{\"ev\":\"alloc\",\"t\":%d,\"tid\":42,\"fn\":\"malloc\",\"addr\":%d,\"size\":8192,\"align\":16,\"stack\":1,\"sim\":null}\n", i + 2, 1048576 + i * 65536
        print "{\"ev\":\"alloc\",\"t\":300,\"tid\":43,\"fn\":\"malloc\",\"addr\":150994944,\"size\":100,\"align\":16,\"stack\":1,\"sim\":null}"
        print "{\"ev\":\"end\",\"t\":301,\"tid\":42,\"reason\":\"exit\",\"status\":0,\"signal\":null,\"records\":301,\"dropped\":0,\"after_end\":0,\"unknown_frees\":0,\"live_allocations\":257,\"live_bytes\":2097252,\"stacks\":1}"
    }' >"$TMP/main.jsonl"
    # LeakSanitizer cannot run under ptrace: a sanitized analyzer's leaks
    # are checked by every other test, not this one.
    expect_status "a trace of two threads, through glibc under strace" 0 \
        env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -o "$TMP/main.strace" -e trace=brk,execve,clone,clone3 "$A" --json --sites 0 --no-replay --allocators glibc "$TMP/main.jsonl"
    expect_eq "its two threads" "$("$J" allocators.threads <"$TMP/out")" 2
    # the replay: the process that executed memsim-replay, and the threads
    # it started; the growth of its break, and the brk calls of its threads
    moved=$(awk 'function hex(s,  v, i) { v = 0; s = tolower(substr(s, 3))
            for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
            return v }
        $2 ~ /^execve\(.*memsim-replay"/ && / = 0$/ { pid = $1 }
        pid && $1 == pid && /clone/ && $NF ~ /^[0-9]+$/ { mine[$NF] = 1 }
        pid && $2 ~ /^brk\(/ && $NF ~ /^0x/ {
            if ($1 in mine) other++
            if ($1 == pid) { v = hex($NF); if (!lo) lo = v; if (v > hi) hi = v } }
        END { printf "%d %d", (hi - lo) / 1024, other }' "$TMP/main.strace")
    if [ "${moved% *}" -ge 2048 ]; then pass "the main thread's 2 MiB in glibc's main arena (the break grew ${moved% *} KiB)"; else
        fail "the main thread's 2 MiB in glibc's main arena" "the break grew ${moved% *} KiB, want 2048 at least"
    fi
    expect_eq "only the replay's main thread moves the break" "${moved#* }" 0
else
    echo "# skip - strace cannot run here: the main arena's check"
fi

# What the allocator's library first reads in the middle of the replay
# (its code, its read-only data: pages of its file) is not memory it
# holds: cold_alloc, a stand-in under tcmalloc's name, reads 1 MiB of its
# read-only data when asked for 4242 bytes.  The peak stays a few pages.
COLD=$BUILD/programs/cold
if [ -f "$COLD/libtcmalloc_minimal.so.4" ]; then
    awk 'BEGIN {
        print "{\"ev\":\"meta\",\"t\":0,\"tid\":1,\"format\":\"memsim-trace\",\"version\":1,\"pid\":42,\"ppid\":1,\"exe\":\"/bin/cold\",\"argv\":[\"cold\"],\"start_unix_ns\":0,\"page_size\":4096,\"strategy\":\"best-fit\",\"device_size\":1073741824,\"stack_depth\":64,\"mmap\":true,\"memsim_version\":\"0.1.0\",\"parent_trace\":null}"
        print "{\"ev\":\"stack\",\"t\":1,\"tid\":1,\"id\":1,\"frames\":[4096]}"
        print "{\"ev\":\"alloc\",\"t\":2,\"tid\":1,\"fn\":\"malloc\",\"addr\":4096,\"size\":4242,\"align\":16,\"stack\":1,\"sim\":null}"
        print "{\"ev\":\"free\",\"t\":3,\"tid\":1,\"fn\":\"free\",\"addr\":4096,\"size\":4242,\"stack\":1}"
        print "{\"ev\":\"end\",\"t\":4,\"tid\":1,\"reason\":\"exit\",\"status\":0,\"signal\":null,\"records\":4,\"dropped\":0,\"after_end\":0,\"unknown_frees\":0,\"live_allocations\":0,\"live_bytes\":0,\"stacks\":1}"
    }' >"$TMP/cold.jsonl"
    MEMSIM_ALLOCATOR_DIRS=$COLD expect_status "a replay through cold_alloc" 0 \
        "$A" --json --sites 0 --no-replay --allocators tcmalloc "$TMP/cold.jsonl"
    expect_eq "cold_alloc replayed" "$("$J" allocators.rows.0.status <"$TMP/out")" ok
    peak=$("$J" allocators.rows.0.peak_rss_bytes <"$TMP/out")
    if [ "$peak" -lt 262144 ]; then pass "the library's file pages are not the peak ($peak)"; else
        fail "the library's file pages are not the peak" "peak RSS $peak, want under 256 KiB (its 1 MiB of read-only data counted)"
    fi
else
    fail "setup" "$COLD/libtcmalloc_minimal.so.4 is missing (make integration builds it)"
fi

# Settings make rows of their own.
expect_status "glibc with settings" 0 "$A" --json --sites 0 --allocators 'glibc,glibc:M_ARENA_MAX=1:M_MMAP_THRESHOLD=65536' "$TMP/known.jsonl"
expect_eq "two rows" "$("$J" allocators.rows.# <"$TMP/out")" 2
expect_grep "the settings' row" '"glibc:M_ARENA_MAX=1:M_MMAP_THRESHOLD=65536"' "$TMP/out"
expect_grep "its settings" '"M_MMAP_THRESHOLD": "65536"' "$TMP/out"

# A missing allocator is named with the line that installs it; the others run.
MEMSIM_ALLOCATOR_DIRS=$TMP/nolibs expect_status "a missing allocator: exit 0" 0 \
    "$A" --json --sites 0 --allocators glibc,jemalloc "$TMP/known.jsonl"
expect_one_line "a missing allocator: one line" "$TMP/err"
expect_grep "the line names it and how to install it" \
    "allocator jemalloc is not installed (its library libjemalloc.so.2): apt-get install libjemalloc2" "$TMP/err"
expect_eq "glibc still replayed" "$("$J" allocators.rows.0.status <"$TMP/out")" ok
expect_eq "jemalloc's row says missing" "$("$J" allocators.rows.1.status <"$TMP/out")" missing
expect_eq "with its install line" "$("$J" allocators.rows.1.install <"$TMP/out")" "apt-get install libjemalloc2"
MEMSIM_ALLOCATOR_DIRS=$TMP/nolibs expect_status "a missing allocator in the text" 0 \
    "$A" --sites 0 --allocators glibc,tcmalloc "$TMP/known.jsonl"
expect_grep "text: not installed" "tcmalloc  *not installed: apt-get install libtcmalloc-minimal4" "$TMP/out"
# None replayed: no table, no ranking of the strategies alone under the
# allocators' name, no switching line (it said "0.00 s in parallel").
MEMSIM_ALLOCATOR_DIRS=$TMP/nolibs expect_status "no allocator installed" 0 \
    "$A" --sites 0 --allocators jemalloc,tcmalloc "$TMP/known.jsonl"
expect_grep "none replayed" "^  allocators (the trace's 8 heap operations on 2 threads): none replayed$" "$TMP/out"
expect_grep "each row says why" "^    jemalloc  *not installed: apt-get install libjemalloc2$" "$TMP/out"
expect_eq "no ranking, no switching" "$(grep -c '^  ranking\|^  switching' "$TMP/out")" 0
# A directory of several traces: the line once, not once per trace.
mkdir "$TMP/two"
cp "$TMP/known.jsonl" "$TMP/two/memsim.known.42.0.jsonl"
sed 's/"pid":42,"ppid":1/"pid":43,"ppid":42/' "$TMP/known.jsonl" >"$TMP/two/memsim.known.43.0.jsonl"
MEMSIM_ALLOCATOR_DIRS=$TMP/nolibs expect_status "a missing allocator, two traces" 0 \
    "$A" --json --sites 0 --allocators glibc,jemalloc "$TMP/two"
expect_one_line "a missing allocator, two traces: one line" "$TMP/err"
expect_eq "a missing allocator, two traces: a row in each" \
    "$("$J" processes.0.allocators.rows.1.status <"$TMP/out")/$("$J" processes.1.allocators.rows.1.status <"$TMP/out")" \
    missing/missing
# A program that ran with jemalloc (its trace loaded the library), not
# installed here: the switching line says why there is nothing to switch
# from (it said "not replayed without settings", as if not asked for).
sed '2i {"ev":"module","t":1,"tid":1,"op":"load","path":"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2","base":4096,"size":4096}' \
    "$TMP/known.jsonl" >"$TMP/je.jsonl"
MEMSIM_ALLOCATOR_DIRS=$TMP/nolibs expect_status "ran with jemalloc, not installed" 0 \
    "$A" --sites 0 --allocators glibc,jemalloc "$TMP/je.jsonl"
expect_grep "switching: the reason" "^  switching: *the program ran with jemalloc, which is not installed here$" "$TMP/out"

# Bad specs: one line, exit 2.
# A setting the allocator would ignore, silently: glibc's unknown tunable
# or a value that is no number (a row the same as glibc's under another
# name, before); the others' are checked against their libraries
# (tests/unit/test_catalog.c).
for bad in hoard 'glibc,glibc' 'jemalloc:dirty' 'glibc:arena=1' '' 'glibc:M_ARENA_MAX=abc' \
    'glibc:glibc.malloc.nope=1'; do
    expect_status "bad --allocators '$bad': exit 2" 2 "$A" --allocators "$bad" "$TMP/known.jsonl"
    expect_one_line "bad --allocators '$bad': one line" "$TMP/err"
done
# jemalloc checks its values itself as it starts, on stderr: the line
# reaches the user (the replay's stderr was dropped), once.
case ",$ALL," in
*,jemalloc,*)
    expect_status "jemalloc's bad value: replayed" 0 "$A" --sites 0 \
        --allocators 'jemalloc:dirty_decay_ms=abc' "$TMP/two"
    expect_one_line "jemalloc's bad value: one line" "$TMP/err"
    expect_grep "jemalloc's own words" "the allocator of jemalloc:dirty_decay_ms=abc said: <jemalloc>: Invalid conf value: dirty_decay_ms:abc" "$TMP/err"
    ;;
esac

# A real program: mt_alloc's four threads, every allocation function
# (traced: not under SANITIZE=1, which builds no libmemsim.so).
if [ "${SANITIZE:-0}" = 1 ] || [ ! -x "$PROG/mt_alloc" ]; then
    echo "# skip - a real program's trace: no libmemsim.so or mt_alloc in $BUILD"
    summary
    exit
fi
"$MEMSIM" run -o "$TMP/mt" --no-children "$PROG/mt_alloc" 4 20000 >/dev/null 2>&1
expect_status "a real trace through $ALL" 0 "$A" --json --sites 0 --allocators "$ALL" "$TMP/mt"
cp "$TMP/out" "$TMP/mt.json"
q() { "$J" "$1" <"$TMP/mt.json"; }
expect_eq "every heap operation of the trace is replayed" "$(q allocators.operations)" \
    "$(($(q summary.allocations) + $(q summary.frees)))"
expect_eq "a replay thread per trace thread" "$(q allocators.threads)" 5
i=0
while [ "$i" -lt "$NALL" ]; do
    name=$(q allocators.rows.$i.name)
    expect_eq "mt_alloc through $name" "$(q allocators.rows.$i.status)/$(q allocators.rows.$i.failed_requests)" ok/0
    i=$((i + 1))
done
expect_status "the text report" 0 "$A" --sites 0 --allocators "$ALL" "$TMP/mt"
expect_grep "text: the allocators' table" "replayed through each in a process of its own" "$TMP/out"
expect_grep "text: the ranking" "ranking (allocators by peak RSS" "$TMP/out"
expect_grep "text: what switching would save" "switching: .*the program ran with glibc" "$TMP/out"
expect_status "the HTML report" 0 "$A" --sites 0 --allocators "$ALL" --html "$TMP/r.html" "$TMP/mt"
expect_grep "HTML: the allocators beside the strategies" 'id="allocators"' "$TMP/r.html"
expect_grep "HTML: RSS over the operations" 'id="allocator-rss"' "$TMP/r.html"

# memsim run --allocator: the program runs traced with the allocator
# preloaded and its heap's RSS measured; the same output and status.
if [ ! -x "$PROG/frag_heap" ] || [ ! -x "$PROG/bss_touch" ] || [ ! -x "$PROG/zero_read" ] ||
    [ ! -f "$BUILD/libmemsim-meter.so" ]; then
    fail "setup" "frag_heap, bss_touch, zero_read or libmemsim-meter.so is missing (make integration builds them)"
    summary
    exit
fi
"$PROG/frag_heap" 20000 >"$TMP/native.out"
native=$?
LAST=${ALL##*,}
expect_status "memsim run --allocator $LAST" "$native" "$MEMSIM" run -o "$TMP/one" --no-children \
    --allocator "$LAST" "$PROG/frag_heap" 20000
expect_eq "the program's output as run natively" "$(cat "$TMP/out")" "$(cat "$TMP/native.out")"
expect_grep "one line: the measured peak heap" "allocator $LAST: peak heap RSS .* MiB in .*frag_heap" "$TMP/err"
expect_eq "resources.json names the allocator" "$("$J" allocator.name <"$TMP/one/resources.json")" "$LAST"
expect_eq "the meter's figures of the process" "$("$J" allocator.processes.# <"$TMP/one/resources.json")" 1
peak=$("$J" allocator.peak_heap_rss_bytes <"$TMP/one/resources.json")
# frag_heap keeps 300,000 blocks of 48..208 bytes: about 40 MiB live
if [ "$peak" -ge 33554432 ] && [ "$peak" -le 201326592 ]; then pass "a plausible peak heap ($peak)"; else
    fail "a plausible peak heap" "$peak, want 32 to 192 MiB"
fi
case $LAST in
glibc) ;;
*) expect_grep "the trace names the allocator's library" "lib${LAST%%malloc}" "$TMP/one/$(ls "$TMP/one" | grep '^memsim\.' | head -n 1)" ;;
esac
# The heap is not the .bss: bss_touch writes 8 MiB of static zeroes
# after start (an anonymous mapping without a name, as the heap's are)
# and keeps nothing on the heap.
expect_status "memsim run --allocator glibc bss_touch" 0 "$MEMSIM" run -o "$TMP/bss" --no-children \
    --allocator glibc "$PROG/bss_touch" 8
peak=$("$J" allocator.peak_heap_rss_bytes <"$TMP/bss/resources.json")
if [ "$peak" -lt 1048576 ]; then pass "the .bss is not the heap (peak heap RSS $peak)"; else
    fail "the .bss is not the heap" "peak heap RSS $peak, want under 1 MiB (the 8 MiB .bss counted)"
fi
# The program's own memory is counted as Rss counts it: zero_read keeps
# 8 MiB written on the heap and only reads 16 MiB of a mapping of its
# own and 8 MiB of its .bss (the kernel's page of zeroes: resident to
# mincore, not in Rss).  Counted by mincore, the 24 MiB subtracted hid
# the whole heap (peak 0); by PAGEMAP_SCAN (Linux 6.7) it is found.
expect_status "memsim run --allocator glibc zero_read" 0 "$MEMSIM" run -o "$TMP/zr" --no-children \
    --allocator glibc "$PROG/zero_read" 8
by=$(sed -n 's/.*"resident_by":"\([a-z_]*\)".*/\1/p' "$TMP"/zr/meter.*.json)
peak=$("$J" allocator.peak_heap_rss_bytes <"$TMP/zr/resources.json")
if [ "$by" = mincore ]; then
    echo "# skip - no PAGEMAP_SCAN (Linux before 6.7): pages only read are subtracted (peak $peak)"
elif [ "$by" != pagemap_scan ]; then
    fail "the meter says how it counts resident pages" "resident_by \"$by\""
elif [ "$peak" -ge 8388608 ] && [ "$peak" -le 9437184 ]; then
    pass "pages only read are not subtracted from the heap (peak heap RSS $peak)"
else
    fail "pages only read are not subtracted from the heap" "peak heap RSS $peak, want 8 to 9 MiB"
fi
MEMSIM_ALLOCATOR_DIRS=$TMP/nolibs expect_status "--allocator of one not installed: exit 2" 2 \
    "$MEMSIM" run -o "$TMP/none" --allocator jemalloc true
expect_one_line "--allocator of one not installed: one line" "$TMP/err"
expect_grep "the line that installs it" "jemalloc is not installed (its library libjemalloc.so.2): apt-get install libjemalloc2" "$TMP/err"
expect_status "--allocator hoard: exit 2" 2 "$MEMSIM" run -o "$TMP/none" --allocator hoard true
expect_one_line "--allocator hoard: one line" "$TMP/err"
expect_status "--allocator glibc:M_ARENA_MAX=x: exit 2" 2 "$MEMSIM" run -o "$TMP/none" \
    --allocator glibc:M_ARENA_MAX=x true
expect_one_line "--allocator glibc:M_ARENA_MAX=x: one line" "$TMP/err"

# The prediction against reality on one program: frag_heap run once per
# allocator; the glibc run's trace replayed through each.  Every
# predicted peak heap RSS within 5% of the measured one, the same order.
expect_status "memsim run --compare-allocators=$ALL" 0 "$MEMSIM" run -o "$TMP/cmp" --no-children \
    --compare-allocators="$ALL" "$PROG/frag_heap" 20000
C=$TMP/cmp/allocators.json
expect_eq "a comparison per allocator" "$("$J" allocators.# <"$C")" "$NALL"
i=0
while [ "$i" -lt "$NALL" ]; do
    name=$("$J" allocators.$i.name <"$C")
    pr=$("$J" allocators.$i.predicted_peak_heap_rss_bytes <"$C")
    me=$("$J" allocators.$i.measured_peak_heap_rss_bytes <"$C")
    if awk -v p="$pr" -v m="$me" 'BEGIN { e = (p - m) / m; exit !(m > 0 && e <= 0.05 && e >= -0.05) }'; then
        pass "$name: predicted $pr within 5% of measured $me"
    else
        fail "$name: prediction within 5%" "predicted $pr, measured $me"
    fi
    i=$((i + 1))
done
expect_eq "the allocators in the same order" "$("$J" pairs_in_order <"$C")" "$("$J" pairs <"$C")"
expect_grep "the table on stderr" "predicted (the replay of the glibc run's trace) against measured" "$TMP/err"
# frag_heap has one thread, and the meter's sampling thread makes no heap
# call of its own: the trace that is replayed has one thread.
expect_eq "the meter's thread is no thread of the trace" "$("$J" allocators.threads <"$TMP/cmp/prediction.json")" 1

# A tree: which process the comparison is about.  touch_mb holds 24 MiB
# in 24 blocks for 0.1 s (the larger peak heap), det_heap makes 50,000 heap
# operations: by default the comparison is det_heap's, the process with
# the most heap operations; --exe touch_mb makes it touch_mb's; an --exe
# of no process of the tree stops after the first run, with one line.
TREE="$PROG/touch_mb 24 100; $PROG/det_heap"
expect_status "--compare-allocators=glibc on a tree" 0 "$MEMSIM" run -o "$TMP/tree" \
    --compare-allocators=glibc sh -c "$TREE"
expect_eq "by default: the process with the most heap operations" \
    "$(basename "$("$J" exe <"$TMP/tree/allocators.json")")" det_heap
expect_grep "the table names it and why" "peak heap RSS of .*/det_heap (the process with the most heap operations)" "$TMP/err"
# The tree's processes beside the one run (sh): each shown briefly with
# its allocators in a line, and the --pid that shows their table (only
# sh's replay was shown: 10 heap operations).
expect_status "--allocators on a tree's directory" 0 "$A" --sites 0 --allocators glibc,glibc:M_ARENA_MAX=1 \
    "$TMP/tree/glibc"
expect_eq "a line for each process shown briefly (touch_mb, det_heap)" \
    "$(grep -c '^  allocators:     glibc.* [0-9.]* [KM]iB.*(peak RSS, best first; --pid [0-9]* shows the table)$' "$TMP/out")" 2
expect_status "--exe touch_mb" 0 "$MEMSIM" run -o "$TMP/tree2" --compare-allocators=glibc \
    --exe touch_mb sh -c "$TREE"
expect_eq "--exe: that process" "$(basename "$("$J" exe <"$TMP/tree2/allocators.json")")" touch_mb
me=$("$J" allocators.0.measured_peak_heap_rss_bytes <"$TMP/tree2/allocators.json")
pr=$("$J" allocators.0.predicted_peak_heap_rss_bytes <"$TMP/tree2/allocators.json")
if awk -v p="$pr" -v m="$me" 'BEGIN { exit !(m >= 24117248 && p >= 0.95 * m && p <= 1.05 * m) }'; then
    pass "--exe touch_mb: its 24 MiB, predicted $pr and measured $me"
else
    fail "--exe touch_mb: its 24 MiB" "predicted $pr, measured $me"
fi
expect_status "--exe of no process of the tree: exit 2" 2 "$MEMSIM" run -o "$TMP/tree3" \
    --compare-allocators=glibc,glibc:M_ARENA_MAX=1 --exe cc1 sh -c "$TREE"
expect_eq "one line about --exe" "$(grep -c -- '--exe' "$TMP/err")" 1
expect_grep "it names the processes measured" \
    "memsim run: --exe: no process of cc1 was measured in the run with glibc (its processes: .*touch_mb" "$TMP/err"
expect_grep "every one of them" "(its processes: .*det_heap" "$TMP/err"
expect_eq "no other run made" "$(ls "$TMP/tree3")" glibc
expect_status "--exe without --compare-allocators: exit 2" 2 "$MEMSIM" run -o "$TMP/tree4" --exe cc1 true
expect_one_line "--exe without --compare-allocators: one line" "$TMP/err"

# The command's exit status, whatever it is.  A program that exits 1 or
# 2, as memsim run does on a failure, ran all the same: it is compared
# (it used to be left out, "the run with glibc failed (status 1)"), and
# the status is the command's, as without the comparison (it was 0).
expect_status "--compare-allocators: the command's exit status 1" 1 "$MEMSIM" run -o "$TMP/st1" \
    --compare-allocators=glibc sh -c "$PROG/det_heap; exit 1"
expect_grep "a program's status 1: compared all the same" "the comparison is in $TMP/st1/allocators.json" "$TMP/err"
expect_eq "a program's status 1: its run counted" "$("$J" allocators.# <"$TMP/st1/allocators.json")" 1
# _exit runs no destructor: the meter's _exit measures (it did not).
expect_status "--allocator glibc: a program that ends by _exit" 7 "$MEMSIM" run -o "$TMP/ex7" \
    --allocator glibc "$PROG/crash" exit7
expect_grep "_exit: measured" "allocator glibc: peak heap RSS .* MiB in .*crash (pid [0-9]*), .*; 1 process measured" "$TMP/err"
expect_grep "_exit: the trace still ends by _exit" '"reason":"_exit"' "$(ls "$TMP"/ex7/memsim.crash.*.jsonl)"
# A crash: its status (128 + 11), and no measured figure (the meter
# writes at exit or _exit): "not measured" and null, not 0 with an error
# of 0%.
ulimit -c 0 2>/dev/null
expect_status "--compare-allocators: a crash's status" 139 "$MEMSIM" run -o "$TMP/segv" \
    --compare-allocators=glibc "$PROG/crash" segv
expect_eq "a crash: the program's output" "$(cat "$TMP/out")" "crash: segv"
expect_grep "a crash: not measured, and no error" "^  glibc  *[0-9.]* MiB  *not measured$" "$TMP/err"
expect_eq "a crash: measured null" "$("$J" allocators.0.measured_peak_heap_rss_bytes <"$TMP/segv/allocators.json")" null
expect_eq "a crash: error null" "$("$J" allocators.0.error <"$TMP/segv/allocators.json")" null
expect_eq "a crash: no pair counted" "$("$J" pairs <"$TMP/segv/allocators.json")" 0

summary
