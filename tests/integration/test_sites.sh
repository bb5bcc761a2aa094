# memsim-analyze's allocation sites and collapsed stacks: hand-built traces
# with known answers (modules reloaded, files gone, a stack without its
# record), then a real program with two known sites, against heaptrack
# when it is installed.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ

# liba.so is replaced by libb.so at the same base between stacks 1 and 2
# (the preload lists the new load before the old unload); neither file
# exists.  Stack 9 has no record.  Peak heap 165 at t=9: stack 1 holds
# 100 + 10, stack 2 50, stack 9 5.
head='{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":42,"ppid":1,"exe":"/bin/known","argv":["known"],"start_unix_ns":0,"page_size":4096,"strategy":"none","device_size":1048576,"stack_depth":64,"mmap":true,"memsim_version":"0.1.0","parent_trace":null}'
cat >"$TMP/mods.jsonl" <<EOT
$head
{"ev":"module","t":1,"tid":1,"op":"load","path":"/nonexistent/liba.so","base":4096,"size":4096}
{"ev":"stack","t":2,"tid":1,"id":1,"frames":[4200,999999999]}
{"ev":"alloc","t":3,"tid":1,"fn":"malloc","addr":100000,"size":100,"align":16,"stack":1,"sim":null}
{"ev":"module","t":4,"tid":1,"op":"load","path":"/nonexistent/libb.so","base":4096,"size":4096}
{"ev":"module","t":5,"tid":1,"op":"unload","path":"","base":4096,"size":4096}
{"ev":"stack","t":6,"tid":1,"id":2,"frames":[4200]}
{"ev":"alloc","t":7,"tid":1,"fn":"malloc","addr":200000,"size":50,"align":16,"stack":2,"sim":null}
{"ev":"alloc","t":8,"tid":1,"fn":"malloc","addr":300000,"size":10,"align":16,"stack":1,"sim":null}
{"ev":"alloc","t":9,"tid":1,"fn":"malloc","addr":400000,"size":5,"align":16,"stack":9,"sim":null}
{"ev":"free","t":10,"tid":1,"fn":"free","addr":100000,"size":100,"stack":2}
{"ev":"end","t":11,"tid":1,"reason":"exit","status":0,"signal":null,"records":12,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":3,"live_bytes":65,"stacks":2}
EOT
expect_status "a trace with reloaded modules" 0 "$A" --json --no-replay "$TMP/mods.jsonl"
cp "$TMP/out" "$TMP/mods.json"
q() { "$J" "$1" <"$TMP/mods.json"; }
expect_eq "three sites" "$(q sites.#)" 3
expect_eq "by peak: stack 1 first" "$(q sites.0.id)" 1
expect_eq "its calls" "$(q sites.0.calls)" 2
expect_eq "its bytes" "$(q sites.0.allocated_bytes)" 110
expect_eq "its peak" "$(q sites.0.peak_bytes)" 110
expect_eq "its leak" "$(q sites.0.leaked_bytes)" 10
expect_eq "its leaked blocks" "$(q sites.0.leaked_allocations)" 1
expect_eq "its frame in the module loaded then" "$(q sites.0.frames.0.module)" /nonexistent/liba.so
expect_eq "at an offset from its base" "$(q sites.0.frames.0.offset)" 104
expect_eq "no function for a file that is gone" "$(q sites.0.frames.0.function)" null
expect_eq "an address in no module" "$(q sites.0.frames.1.module)" null
expect_eq "has no offset" "$(q sites.0.frames.1.offset)" null
expect_eq "the same address later: the module loaded in its place" \
    "$(q sites.1.frames.0.module)" /nonexistent/libb.so
expect_eq "a stack without a record has no frames" "$(q sites.2.frames.#)" 0
expect_eq "and still its figures" "$(q sites.2.peak_bytes)" 5
expect_grep "a missing module file, named" \
    "module /nonexistent/liba.so: cannot open it: No such file or directory; its frames print as liba.so+0x" \
    "$TMP/err"
expect_grep "a stack without its record, named with file and line" \
    "mods.jsonl:10: stack 9 is used but no stack record came before" "$TMP/err"
expect_eq "one line each" "$(wc -l <"$TMP/err")" 3

# The same past 16,384 live blocks, where the analyzer reads records ahead
# of the one it takes (analyzer/process.c): the line named is still the
# record's own, not the reader's.
{
    echo "$head"
    echo '{"ev":"stack","t":1,"tid":1,"id":1,"frames":[4200]}'
    awk 'BEGIN { for (i = 0; i < 20000; i++)
        printf "{\"ev\":\"alloc\",\"t\":2,\"tid\":1,\"fn\":\"malloc\",\"addr\":%d,\"size\":16,\"align\":16,\"stack\":1,\"sim\":null}\n", 65536 + 32 * i }'
    echo '{"ev":"alloc","t":3,"tid":1,"fn":"malloc","addr":8,"size":5,"align":16,"stack":9,"sim":null}'
    for i in 1 2 3 4 5 6 7 8 9 10; do
        echo "{\"ev\":\"free\",\"t\":4,\"tid\":1,\"fn\":\"free\",\"addr\":$((65536 + 32 * i)),\"size\":16,\"stack\":1}"
    done
    echo '{"ev":"end","t":5,"tid":1,"reason":"exit","status":0,"signal":null,"records":20014,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":19991,"live_bytes":319845,"stacks":1}'
} >"$TMP/many.jsonl"
expect_status "a trace of 20,001 live blocks" 0 "$A" --json --no-replay "$TMP/many.jsonl"
expect_grep "its stack without a record, at its own line" \
    "many.jsonl:20003: stack 9 is used but no stack record came before" "$TMP/err"
expect_eq "its figures" "$("$J" summary.leaked_allocations <"$TMP/out")/$("$J" summary.leaked_bytes <"$TMP/out")" \
    "19991/319845"

expect_status "text" 0 "$A" --no-replay "$TMP/mods.jsonl"
expect_grep "top sites by peak" "top allocating functions by peak:" "$TMP/out"
expect_grep "figures, plurals right" "#1  liba.so+0x68: 110 B live at peak, 2 calls, 110 B allocated, leaked 10 B in 1 block$" \
    "$TMP/out"
expect_eq "no internal stack ids in the text" "$(grep -c '(stack [0-9]' "$TMP/out")" 0
expect_grep "a stack given once, referred to after" "(the stack under #1 by peak)" "$TMP/out"
expect_grep "module+offset" "liba.so+0x68" "$TMP/out"
expect_grep "a bare address" "0x3b9ac9ff" "$TMP/out"
expect_grep "by leaked bytes" "top allocating functions by leaked bytes:" "$TMP/out"
expect_grep "a stack without a record" "(no stack record)" "$TMP/out"

expect_status "--collapsed" 0 "$A" --collapsed "$TMP/mods.jsonl"
expect_grep "outermost first, weighted by peak" "^0x3b9ac9ff;liba.so+0x68 110$" "$TMP/out"
expect_grep "the reloaded module" "^libb.so+0x68 50$" "$TMP/out"
expect_grep "a stack without a record" "^\[stack_9\] 5$" "$TMP/out"
expect_eq "one line per stack" "$(wc -l <"$TMP/out")" 3
expect_status "--collapsed=calls" 0 "$A" --collapsed=calls "$TMP/mods.jsonl"
expect_grep "weighted by calls" "^0x3b9ac9ff;liba.so+0x68 2$" "$TMP/out"
expect_status "--collapsed=leaked" 0 "$A" --collapsed=leaked "$TMP/mods.jsonl"
expect_grep "weighted by leaks" "^0x3b9ac9ff;liba.so+0x68 10$" "$TMP/out"
expect_eq "stacks with nothing leaked are left out" "$(grep -c . "$TMP/out")" 3

sed 's/"pid":42/"pid":43/; s/"exe":"\/bin\/known"/"exe":"\/bin\/other prog"/' \
    "$TMP/mods.jsonl" >"$TMP/mods2.jsonl"
expect_status "--collapsed over two traces" 0 "$A" --collapsed "$TMP/mods.jsonl" "$TMP/mods2.jsonl"
expect_grep "prefixed with exe:pid" "^known:42;0x3b9ac9ff;liba.so+0x68 110$" "$TMP/out"
expect_grep "blanks in names made safe" "^other_prog:43;libb.so+0x68 50$" "$TMP/out"
expect_eq "one warning per missing file over both traces" \
    "$(grep -c 'cannot open it' "$TMP/err")" 2

expect_status "--sites 1" 0 "$A" --json --sites 1 --no-replay "$TMP/mods.jsonl"
expect_eq "one site" "$("$J" sites.# <"$TMP/out")" 1
expect_status "--sites 0" 0 "$A" --json --sites 0 --no-replay "$TMP/mods.jsonl"
expect_eq "no sites" "$("$J" sites.# <"$TMP/out")" 0
expect_status "--sites 0, text" 0 "$A" --sites 0 --no-replay "$TMP/mods.jsonl"
if grep -q "top sites" "$TMP/out"; then fail "no site sections" "$(head -c 300 "$TMP/out")"; else
    pass "no site sections"; fi
expect_status "a bad --sites" 2 "$A" --sites many "$TMP/mods.jsonl"
expect_one_line "one line for it" "$TMP/err"
expect_status "a bad --collapsed" 2 "$A" --collapsed=bytes "$TMP/mods.jsonl"
expect_one_line "one line for it" "$TMP/err"
expect_status "--json with --collapsed" 2 "$A" --json --collapsed "$TMP/mods.jsonl"
expect_one_line "one line for it" "$TMP/err"

# Bad stack and module records: named once each, the rest analyzed.
cat >"$TMP/bad.jsonl" <<EOT
$head
{"ev":"module","t":1,"tid":1,"op":"load","base":4096,"size":4096}
{"ev":"stack","t":2,"tid":1,"id":"one","frames":[1]}
{"ev":"stack","t":3,"tid":1,"id":1,"frames":[4200]}
{"ev":"stack","t":4,"tid":1,"id":1,"frames":[4300]}
{"ev":"alloc","t":5,"tid":1,"fn":"malloc","addr":100000,"size":100,"align":16,"stack":1,"sim":null}
{"ev":"alloc","t":6,"tid":1,"fn":"malloc","addr":200000,"size":7,"align":16,"stack":123456789,"sim":null}
{"ev":"end","t":7,"tid":1,"reason":"exit","status":0,"signal":null,"records":8,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":2,"live_bytes":107,"stacks":1}
EOT
expect_status "bad stack and module records" 0 "$A" --json --no-replay "$TMP/bad.jsonl"
expect_grep "a module record" "bad.jsonl:2: a module record without a valid op, path, base or size" "$TMP/err"
expect_grep "a stack record" "bad.jsonl:3: a stack record without a valid id and frames" "$TMP/err"
expect_grep "a duplicate" "bad.jsonl:5: stack 1 is recorded twice; the first record is kept" "$TMP/err"
expect_grep "an absurd id" "bad.jsonl:7: stack id 123456789 is far beyond the others" "$TMP/err"
expect_eq "the first record kept" "$("$J" sites.0.frames.0.address <"$TMP/out")" 4200
expect_eq "the absurd id counted as no stack" "$("$J" sites.1.id <"$TMP/out")" 0

# A real program, end to end (not under SANITIZE=1: no libmemsim.so).
if [ "${SANITIZE:-}" != 1 ]; then
    P=$BUILD/programs/sites
    SRC=tests/programs/sites.c
    leak_line=$(grep -n 'sites: the leak' "$SRC" | cut -d: -f1)
    churn_line=$(grep -n 'sites: the churn' "$SRC" | cut -d: -f1)
    mkdir -p "$TMP/run"
    expect_status "sites under the preload" 0 env LD_PRELOAD="$BUILD/libmemsim.so" \
        MEMSIM_OUTPUT="$TMP/run" "$P"
    T=$(ls "$TMP"/run/memsim.sites.*.jsonl)
    expect_status "analyzed" 0 "$A" --json --no-replay "$T"
    cp "$TMP/out" "$TMP/run.json"
    # The site whose frames include leak_here, and churn's.
    site_of() {
        n=$("$J" sites.# <"$TMP/run.json")
        i=0
        while [ "$i" -lt "$n" ]; do
            if "$J" "sites.$i.frames" <"$TMP/run.json" | grep -q "\"function\":\"$1\""; then
                echo "$i"
                return
            fi
            i=$((i + 1))
        done
        echo none
    }
    L=$(site_of leak_here)
    C=$(site_of churn)
    r() { "$J" "$1" <"$TMP/run.json"; }
    expect_eq "leak_here: 300 calls" "$(r sites.$L.calls)" 300
    expect_eq "leak_here: 30000 bytes leaked" "$(r sites.$L.leaked_bytes)" 30000
    expect_eq "leak_here: 300 blocks leaked" "$(r sites.$L.leaked_allocations)" 300
    expect_eq "leak_here: its peak" "$(r sites.$L.peak_bytes)" 30000
    expect_eq "leak_here: innermost frame" "$(r sites.$L.frames.0.function)" leak_here
    expect_eq "leak_here: its line" "$(r sites.$L.frames.0.line)" "$leak_line"
    expect_eq "leak_here: called from main" "$(r sites.$L.frames.1.function)" main
    expect_eq "leak_here: in the program" "$(r sites.$L.frames.0.module)" "$(cd "$(dirname "$P")" && pwd)/sites"
    expect_eq "churn: 1000 calls" "$(r sites.$C.calls)" 1000
    expect_eq "churn: 64000 bytes" "$(r sites.$C.allocated_bytes)" 64000
    expect_eq "churn: no leak" "$(r sites.$C.leaked_bytes)" 0
    expect_eq "churn: its line" "$(r sites.$C.frames.0.line)" "$churn_line"
    expect_eq "the peaks add up to the peak heap" \
        "$(($(r sites.$L.peak_bytes) + $(r sites.$C.peak_bytes)))" "$(r summary.peak_heap_bytes)"

    expect_status "text" 0 "$A" --no-replay "$T"
    expect_grep "leak_here with its file and line" "leak_here at sites.c:$leak_line" "$TMP/out"
    expect_grep "churn with its file and line" "churn at sites.c:$churn_line" "$TMP/out"
    # Grouped by allocating function: the first frame outside the allocator
    # and its wrappers (tests/programs/sites_wrap.c: my_xmalloc from two
    # lines of build).
    mkdir -p "$TMP/wrap"
    expect_status "sites_wrap under the preload" 0 env LD_PRELOAD="$BUILD/libmemsim.so" \
        MEMSIM_OUTPUT="$TMP/wrap" "$BUILD/programs/sites_wrap"
    expect_status "sites_wrap analyzed" 0 "$A" --no-replay "$TMP"/wrap/memsim.sites_wrap.*.jsonl
    expect_grep "one function, past the wrapper" \
        "#1  build (sites_wrap.c): 2.93 KiB live at peak, 2 calls, 2.93 KiB allocated, leaked 2.93 KiB in 2 blocks$" "$TMP/out"
    expect_grep "its two stacks under it, heaviest first" \
        "stack 1 of 2: 1.95 KiB live at peak, 1 call" "$TMP/out"
    expect_eq "the wrapper is not a function of its own" "$(grep -c '#[0-9]  my_xmalloc' "$TMP/out")" 0
    expect_status "--collapsed=leaked" 0 "$A" --collapsed=leaked "$T"
    expect_grep "the leak's line" ";main;leak_here 30000$" "$TMP/out"
    expect_eq "only the leaking stack" "$(grep -c . "$TMP/out")" 1

    if command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1; then
        expect_status "sites under heaptrack" 0 heaptrack -o "$TMP/ht" "$P"
        heaptrack_print "$TMP"/ht.zst >"$TMP/ht.txt" 2>/dev/null
        # "300 calls to allocation functions with ... from\nleak_here\n  at FILE:LINE"
        ht_site() {
            awk -v f="$1" '/calls to allocation functions/ { calls = $1; getline;
                if ($1 == f) { getline; sub(/.*:/, "", $2); print calls, $2; exit } }' "$TMP/ht.txt"
        }
        expect_eq "heaptrack agrees on leak_here's calls and line" "$(ht_site leak_here)" \
            "$(r sites.$L.calls) $(r sites.$L.frames.0.line)"
        expect_eq "heaptrack agrees on churn's calls and line" "$(ht_site churn)" \
            "$(r sites.$C.calls) $(r sites.$C.frames.0.line)"
    else
        echo "# skip - heaptrack comparison: heaptrack is not installed"
    fi

    # dlswap: a plugin dlopened by a relative path, used, dlclosed, and
    # another loaded (usually at the same address) and used: each site is
    # named from its own library, the module paths are absolute, and
    # every unload comes after the records of allocations made through it.
    DL=$(cd "$BUILD/programs" && pwd)
    mkdir -p "$TMP/dl"
    expect_status "dlswap under the preload" 0 sh -c \
        "cd '$DL' && LD_PRELOAD='$DL/../libmemsim.so' MEMSIM_OUTPUT='$TMP/dl' ./dlswap"
    T=$(ls "$TMP"/dl/memsim.dlswap.*.jsonl)
    expect_eq "plugin paths are absolute" \
        "$(grep -o '"path":"[^"]*libplug_[ab].so"' "$T" | sort -u | tr '\n' ' ')" \
        "\"path\":\"$DL/libplug_a.so\" \"path\":\"$DL/libplug_b.so\" "
    ua=$(grep -n '"op":"unload"' "$T" | head -n 1 | cut -d: -f1)
    lb=$(grep -n '^\["a",[-0-9]*,[0-9]*,"[0-9a-f]*",222,' "$T" | tail -n 1 | cut -d: -f1)
    la=$(grep -n '^\["a",[-0-9]*,[0-9]*,"[0-9a-f]*",111,' "$T" | tail -n 1 | cut -d: -f1)
    expect_eq "a's last allocation before the first unload" "$([ "$la" -lt "$ua" ] && echo yes)" yes
    expect_eq "b's allocations all before the last unload" \
        "$([ "$lb" -lt "$(grep -n '"op":"unload"' "$T" | tail -n 1 | cut -d: -f1)" ] && echo yes)" yes
    expect_status "dlswap analyzed" 0 "$A" --json --no-replay "$T"
    cp "$TMP/out" "$TMP/dl.json"
    d() { "$J" "$1" <"$TMP/dl.json"; }
    expect_eq "b's site: 200 calls" "$(d sites.0.calls)" 200
    expect_eq "b's site: in plug_b" "$(d sites.0.frames.0.function)" plug_b
    expect_eq "b's site: from libplug_b.so" "$(d sites.0.frames.0.module)" "$DL/libplug_b.so"
    expect_eq "a's site: 100 calls" "$(d sites.1.calls)" 100
    expect_eq "a's site: in plug_a" "$(d sites.1.frames.0.function)" plug_a
    expect_eq "a's site: from libplug_a.so" "$(d sites.1.frames.0.module)" "$DL/libplug_a.so"

    # A function's totals are the sums over all its stacks, the same in
    # every list: step() is reached by 512 stacks of one call each
    # (256 leaked, 256 temporary), other() by one of 1000 calls.
    MS=$TMP/many
    expect_status "many_stacks under memsim run" 0 "$BUILD/memsim" run --out "$MS" -- "$BUILD/programs/many_stacks"
    expect_status "its report" 0 "$A" --no-replay --sites 2 "$MS"
    cp "$TMP/out" "$TMP/many.txt"
    step='step (many_stacks.c): 4.02 KiB live at peak, 512 calls, 256 temporary, 8.00 KiB allocated, leaked 4.00 KiB in 256 blocks'
    expect_eq "step: its totals over its 512 stacks, in the four lists" \
        "$(grep '^    #[0-9]  step ' "$TMP/many.txt" | sed 's/^    #[0-9]  //' | sort | uniq -c | sed 's/^ *//')" "4 $step"
    expect_eq "the lists: step first by peak and leaked bytes, second by calls and temporaries" \
        "$(grep '^  top allocating\|^    #[0-9]  ' "$TMP/many.txt" | sed 's/ (many_stacks.c).*//; s/^  top allocating functions by //; s/^    #//' | tr '\n' '/')" \
        "peak:/1  step/calls:/1  other/2  step/temporary allocations:/1  other/2  step/leaked bytes:/1  step/"
    expect_grep "the temporaries per function add up to the summary's" "^  allocations: .* 1256 temporary\$" "$TMP/many.txt"
    expect_eq "step's stacks: 512 of them by calls" \
        "$(grep -A1 '^    #2  step' "$TMP/many.txt" | sed -n 's/^      stack 1 of \([0-9]*\):.*/\1/p' | head -n 1)" 512

    # Leak suppressions from a file: a pattern a line, on any frame's
    # function, library or source file; what they leave out is counted.
    s() { "$J" "$1" <"$TMP/out"; }
    T=$(ls "$TMP"/run/memsim.sites.*.jsonl)
    printf '# the planted leak\nleak:leak_h*\n\n' >"$TMP/supp.fn"
    expect_status "--suppressions on a function" 0 "$A" --json --no-replay --suppressions "$TMP/supp.fn" "$T"
    expect_eq "leak_here's leaks suppressed, counted apart" \
        "$(s summary.leaked_bytes)/$(s summary.suppressed_leaked_bytes)/$(s summary.suppressed_leaked_allocations)" "0/30000/300"
    expect_eq "its site marked" "$(s sites.0.leak_suppressed)/$(s sites.0.leaked_bytes)" "true/30000"
    printf 'sites.c$\n' >"$TMP/supp.file"
    expect_status "--suppressions on a source file" 0 "$A" --json --no-replay --suppressions "$TMP/supp.file" "$T"
    expect_eq "by source file: the same" "$(s summary.leaked_bytes)/$(s summary.suppressed_leaked_bytes)" "0/30000"
    printf 'leak:^leak$\n' >"$TMP/supp.none"
    expect_status "--suppressions that match nothing" 0 "$A" --json --no-replay --suppressions "$TMP/supp.none" "$T"
    expect_eq "anchored: leak_here is not ^leak\$" "$(s summary.leaked_bytes)/$(s summary.suppressed_leaked_bytes)" "30000/0"
    expect_status "the text report" 0 "$A" --no-replay --suppressions "$TMP/supp.fn" "$T"
    expect_grep "the text says how much was suppressed" \
        "^  leaked:         0 B in 0 blocks; 29.3 KiB in 300 blocks suppressed " "$TMP/out"
    expect_eq "by leaked bytes: nothing left" \
        "$(grep -c '^  top allocating functions by leaked bytes: none$' "$TMP/out")" 1
    expect_status "a suppressions file that is not there" 2 "$A" --suppressions "$TMP/nonexistent" "$T"
    expect_eq "one line naming it" "$(cat "$TMP/err")" \
        "memsim-analyze: --suppressions: cannot read $TMP/nonexistent: No such file or directory"
fi

summary
