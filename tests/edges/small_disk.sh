# Small disks.  The trace file is allocated ahead only by the room its
# end record needs (recorder/out.c): on a 1 MiB filesystem the program
# sees the room it has natively, less what its trace wrote, and its
# files are the same; a tree of ten processes tracing onto a small disk
# gets ten traces, each ending with its end record.  (Each trace took a
# mebibyte at a time: the program saw 0 KiB free and its first write
# failed, and in the tree, the first traces' room starved the others.)
# Needs root, to mount a tmpfs.
# small_disk_mount DIR SIZE: a fresh tmpfs of SIZE at DIR.
small_disk_mount() { mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" 2>/dev/null; }
if ! as_root; then
    echo "# skip - small_disk: mounting a small tmpfs needs root"
elif need_program small_disk; then
    fresh_out
    if small_disk_mount "$TMP/disk" 1m && small_disk_mount "$OUT" 1m; then
        untraced "$EDGES/small_disk" "$TMP/disk" >"$TMP/p.out" 2>"$TMP/p.err"
        plain=$?
        traced "$EDGES/small_disk" "$OUT" >"$TMP/t.out" 2>"$TMP/t.err"
        st=$?
        expect_eq "small_disk: natively, room and the whole file" "$plain:$(cat "$TMP/p.out")" \
            "0:room: yes
wrote 917504 bytes"
        same_status "small_disk" "$st" "$plain"
        expect_same "small_disk: same stdout" "$TMP/p.out" "$TMP/t.out"
        expect_same "small_disk: same stderr" "$TMP/p.err" "$TMP/t.err"
        expect_eq "small_disk: same files" "$(cd "$TMP/disk" && ls)" \
            "$(cd "$OUT" && ls | grep -v '^memsim\.')"
        expect_same "small_disk: the same bytes in them" "$TMP/disk/data" "$OUT/data"
        f=$(only_trace)
        expect_eq "small_disk: the trace ends with its end record, nothing dropped" \
            "$(end_field reason "$f"):$(end_field dropped "$f")" "exit:0"
    else
        fail "small_disk: a 1 MiB tmpfs" "mount failed"
    fi
    umount "$TMP/disk" 2>/dev/null
    umount "$OUT" 2>/dev/null

    fresh_out
    if small_disk_mount "$OUT" 2m; then
        untraced "$EDGES/small_disk" "$TMP" 10 >"$TMP/p.out" 2>"$TMP/p.err"
        plain=$?
        traced "$EDGES/small_disk" "$OUT" 10 >"$TMP/t.out" 2>"$TMP/t.err"
        st=$?
        same_status "small_disk, a tree of 10" "$st" "$plain"
        expect_eq "small_disk, a tree of 10: its output" "$(cat "$TMP/t.out")" "10 processes"
        expect_same "small_disk, a tree of 10: same stdout" "$TMP/p.out" "$TMP/t.out"
        expect_same "small_disk, a tree of 10: same stderr" "$TMP/p.err" "$TMP/t.err"
        # The first process returns from main, its children _exit.
        ends=$(for f in "$OUT"/memsim.small_disk.*.jsonl.zst; do
            [ -e "$f" ] && end_field reason "$f"
        done | sort | uniq -c | tr -s ' \n' ' ')
        expect_eq "small_disk, a tree of 10: ten traces, each ending with its end record" \
            "$ends" " 9 _exit 1 exit "
        check_traces "small_disk, a tree of 10"
    else
        fail "small_disk: a 2 MiB tmpfs" "mount failed"
    fi
    umount "$OUT" 2>/dev/null
fi
