# memsim-analyze on hostile traces: module paths naming a FIFO, a device
# or a directory are refused without blocking, and strings holding
# terminal escapes and newlines print escaped, never raw.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ
GB=1073741824

# Trace lines are written with put, not echo: dash's echo turns the \n of
# a JSON string into a newline.
put() { printf '%s\n' "$1"; }

# control_bytes FILE: how many bytes of FILE are control characters other
# than the newlines that end its lines.
control_bytes() { LC_ALL=C tr -d '\n' <"$1" | LC_ALL=C tr -dc '\000-\037\177' | wc -c | tr -d ' '; }

# modtrace NAME PATH: a trace whose one stack lies in a module at PATH.
modtrace() {
    {
        put '{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":42,"ppid":1,"exe":"/bin/known","argv":["known"],"start_unix_ns":0,"page_size":4096,"strategy":"none","device_size":1048576,"stack_depth":64,"mmap":true,"memsim_version":"0.1.0","parent_trace":null}'
        put '{"ev":"module","t":1,"tid":1,"op":"load","path":"'"$2"'","base":4096,"size":4096}'
        put '{"ev":"stack","t":2,"tid":1,"id":1,"frames":[4200,4400]}'
        put '{"ev":"alloc","t":3,"tid":1,"addr":100000,"size":100,"stack":1,"sim":null}'
        put '{"ev":"end","t":4,"tid":1,"reason":"exit","status":0,"signal":null,"records":5,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":1,"live_bytes":100,"stacks":1}'
    } >"$TMP/$1.jsonl"
}

# A FIFO nobody writes: opening it for reading would wait forever.  The
# analyzer finishes (timeout would exit 124: a hang, not a slow run on a
# loaded machine) with its report, the frames unsymbolized, and one line
# naming the FIFO.
mkfifo "$TMP/libfifo.so"
modtrace fifo "$TMP/libfifo.so"
expect_status "a module that is a FIFO: done, not hung" 0 timeout 60 "$A" --no-replay "$TMP/fifo.jsonl"
expect_grep "the report" "#1  .*: 100 B live at peak, 1 call," "$TMP/out"
expect_grep "its frames unsymbolized" "^        libfifo.so+0x68$" "$TMP/out"
expect_grep "both of them" "^        libfifo.so+0x130$" "$TMP/out"
expect_eq "one warning" "$(cat "$TMP/err")" \
    "memsim-analyze: module $TMP/libfifo.so: a FIFO, not a regular file; its frames print as libfifo.so+0x…"
expect_status "--json too" 0 timeout 60 "$A" --json --no-replay "$TMP/fifo.jsonl"
expect_eq "the frame's module" "$("$J" sites.0.frames.0.module <"$TMP/out")" "$TMP/libfifo.so"
expect_eq "no function" "$("$J" sites.0.frames.0.function <"$TMP/out")" null
expect_status "--collapsed too" 0 timeout 60 "$A" --collapsed "$TMP/fifo.jsonl"
expect_grep "its stack" "^libfifo.so+0x130;libfifo.so+0x68 100$" "$TMP/out"

# A device: /dev/zero would read as zeros without end; it is not opened.
modtrace zero /dev/zero
expect_status "a module that is /dev/zero" 0 timeout 60 "$A" --no-replay "$TMP/zero.jsonl"
expect_grep "its frames unsymbolized" "^        zero+0x68$" "$TMP/out"
expect_eq "one warning" "$(cat "$TMP/err")" \
    "memsim-analyze: module /dev/zero: a character device, not a regular file; its frames print as zero+0x…"
modtrace dir "$TMP"
expect_status "a module that is a directory" 0 timeout 60 "$A" --no-replay "$TMP/dir.jsonl"
expect_grep "one warning" "a directory, not a regular file" "$TMP/err"
expect_one_line "one line" "$TMP/err"

# ESC and newline in the exe, argv, the end reason, a phase name and two
# module paths (neither file exists), one with a ';' for the collapsed
# format.
E='\u001b'
N='\n'
# spiketrace FILE EXE PHASE: a trace of EXE with a spike in the phase
# PHASE (a finding that names it) and a stack in two modules.
spiketrace() {
    {
        put '{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":7,"ppid":1,"exe":"'"$2"'","argv":["a'$E'[2Jb","c'$N'd"],"start_unix_ns":0,"page_size":4096,"strategy":"none","device_size":1073741824,"stack_depth":64,"mmap":false,"memsim_version":"0.1.0","parent_trace":null}'
        put '{"ev":"module","t":1,"tid":1,"op":"load","path":"/nonexistent/lib'$E'[31mred'$N'.so","base":4096,"size":4096}'
        put '{"ev":"module","t":1,"tid":1,"op":"load","path":"/nonexistent/a;b.so","base":65536,"size":4096}'
        put '{"ev":"stack","t":2,"tid":1,"id":1,"frames":[4200,65636]}'
        put '{"ev":"alloc","t":3,"tid":1,"addr":100000,"size":100,"stack":1,"sim":null}'
        i=0
        while [ "$i" -lt 20 ]; do
            i=$((i + 1))
            t=$((i * 100000000))
            g=$((20 * 1048576)); [ "$i" = 10 ] && g=$((400 * 1048576))
            [ "$i" = 10 ] && put '{"ev":"phase","t":'$((t - 1))',"tid":1,"op":"begin","name":"'"$3"'"}'
            put '{"ev":"sample","t":'$t',"tid":2,"rss":'$((104857600 + g))',"hwm":0,"vm_size":0,"vm_peak":0,"heap_live":100,"heap_blocks":1,"malloc_reserved":104857600,"malloc_in_use":104857600,"mmap_live":0,"device_total":'$GB',"tree_rss":0,"children":[]}'
            [ "$i" = 10 ] && put '{"ev":"phase","t":'$((t + 1))',"tid":1,"op":"end"}'
        done
        put '{"ev":"end","t":9000000000,"tid":1,"reason":"exit'$E'[2J","status":0,"signal":null,"records":0,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":1,"live_bytes":100,"stacks":1}'
    } >"$1"
}
spiketrace "$TMP/esc.jsonl" "/bin/evil$E]0;pwned\u0007${N}forged line" "load$E[31m${N}X"

expect_status "a trace of hostile strings" 0 "$A" --no-replay "$TMP/esc.jsonl"
expect_eq "no control bytes in the report" "$(control_bytes "$TMP/out")" 0
expect_eq "none in the warnings" "$(control_bytes "$TMP/err")" 0
expect_grep "the exe, escaped" '^== /bin/evil\\x1b\]0;pwned\\x07\\x0aforged line (pid 7)' "$TMP/out"
expect_grep "the end reason" '^  ended:          exit\\x1b\[2J$' "$TMP/out"
expect_grep "the phase of the finding" ', phase load\\x1b\[31m\\x0aX)$' "$TMP/out"
expect_grep "a module's frame" '^        lib\\x1b\[31mred\\x0a.so+0x68$' "$TMP/out"
expect_grep "the warning naming the module" \
    '^memsim-analyze: module /nonexistent/lib\\x1b\[31mred\\x0a.so: cannot open it: No such file or directory; its frames print as lib\\x1b\[31mred\\x0a.so+0x…$' \
    "$TMP/err"
expect_eq "one warning per module" "$(wc -l <"$TMP/err" | tr -d ' ')" 2

expect_status "JSON of the same trace" 0 "$A" --json --no-replay "$TMP/esc.jsonl"
expect_eq "JSON keeps the exe as it is (jansson escapes it)" "$("$J" summary.exe <"$TMP/out")" \
    "$(printf '/bin/evil\033]0;pwned\007\nforged line')"
expect_eq "and no raw control byte" "$(control_bytes "$TMP/out")" 0

cp "$TMP/esc.jsonl" "$TMP/esc2.jsonl"
expect_status "--collapsed over two traces" 0 "$A" --collapsed "$TMP/esc.jsonl" "$TMP/esc2.jsonl"
expect_eq "no control bytes in the stacks" "$(control_bytes "$TMP/out")" 0
expect_grep "escaped frames; ';' in a name escaped too" \
    '^evil\\x1b\]0\\x3bpwned\\x07\\x0aforged_line:7;a\\x3bb.so+0x64;lib\\x1b\[31mred\\x0a.so+0x68 100$' \
    "$TMP/out"
expect_eq "one line per stack" "$(wc -l <"$TMP/out" | tr -d ' ')" 2

expect_status "the tree of two traces" 0 "$A" --no-replay "$TMP/esc.jsonl" "$TMP/esc2.jsonl"
expect_eq "no control bytes in it" "$(control_bytes "$TMP/out")" 0
expect_grep "its rows name the exe escaped" ' evil\\x1b\]0;pwned\\x07\\x0aforged line ' "$TMP/out"

# A line that is no JSON, with a raw ESC: jansson's message quotes it.
{ head -n 1 "$TMP/esc.jsonl"; printf '{"ev":\033[2J}\n'; tail -n 1 "$TMP/esc.jsonl"; } >"$TMP/raw.jsonl"
expect_status "a raw ESC in a line" 0 "$A" --no-replay "$TMP/raw.jsonl"
expect_grep "the reader's message quotes it escaped" \
    "raw.jsonl:2: not a JSON object: invalid token near '\\\\x1b'$" "$TMP/err"
expect_eq "no control bytes in the messages" "$(control_bytes "$TMP/err")" 0

# Strings JSON takes only as valid UTF-8.  An exe and a phase name too long
# for the analyzer's buffers (511 and 63 bytes), a two-byte character
# across the cut: cut before it, or json_pack would fail and the summary,
# or the finding, be lost.
a50=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
a500=$a50$a50$a50$a50$a50$a50$a50$a50$a50$a50
spiketrace "$TMP/long.jsonl" "/${a500}aaaaaaaaaé" "${a50}aaaaaaaaaaaaé"
expect_status "long strings" 0 "$A" --json --no-replay "$TMP/long.jsonl"
expect_eq "the exe cut before the character" "$("$J" summary.exe <"$TMP/out")" "/${a500}aaaaaaaaa"
expect_eq "the finding kept" "$("$J" findings.# <"$TMP/out")" 1
expect_eq "its phase cut before the character" "$("$J" findings.0.phase <"$TMP/out")" \
    "${a50}aaaaaaaaaaaa"
# A trace's own path is bytes: one that is not UTF-8 is given escaped.
cp "$TMP/fifo.jsonl" "$TMP/bad$(printf '\377').jsonl"
expect_status "a trace path that is not UTF-8" 0 "$A" --json --no-replay "$TMP"/bad?.jsonl
expect_eq "the trace's path, escaped" "$("$J" summary.trace <"$TMP/out")" "$TMP/bad\\xff.jsonl"
expect_status "and in text" 0 "$A" --no-replay "$TMP"/bad?.jsonl
expect_grep "the header" "^== /bin/known (pid 42) — $TMP/bad\\\\xff.jsonl$" "$TMP/out"

summary
