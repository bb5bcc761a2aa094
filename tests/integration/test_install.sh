# make install PREFIX=… into a temporary prefix: exactly the files it
# should put there, man pages that render without a warning, memsim.pc,
# a traced program run from the installed tree, then make uninstall
# removing exactly those files.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - make install: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi

P=$(cd "$TMP" && pwd -P)/prefix
PROG=$(cd "$BUILD" && pwd -P)/programs
LIMIT=60
# The tree as built: make's variables other than BUILD and PREFIX are the
# defaults, so the copy installed is the one the other tests ran.
inst() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory BUILD="$BUILD" PREFIX="$P" "$@"; }

expect_status "make install PREFIX=...: exit 0" 0 inst install
cat "$TMP/err" >"$TMP/install.err"

# Every file, exactly.
expect_eq "make install: exactly these files" \
    "$(cd "$P" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')" \
    "./bin/memsim ./bin/memsim-analyze ./include/memsim.h ./lib/memsim/libmemsim-meter.so ./lib/memsim/libmemsim.so ./lib/memsim/memsim-recorder ./lib/memsim/memsim-replay ./lib/pkgconfig/memsim.pc ./share/bash-completion/completions/memsim ./share/bash-completion/completions/memsim-analyze ./share/man/man1/memsim-analyze.1 ./share/man/man1/memsim-run.1 ./share/man/man1/memsim-simulate.1 ./share/man/man1/memsim.1 ./share/man/man7/libmemsim.7 "
expect_eq "make install: nothing on the linker's search path" "$(ls "$P/lib" | tr '\n' ' ')" "memsim pkgconfig "
expect_eq "make install: the programs executable" \
    "$(stat -c %a "$P/bin/memsim" "$P/bin/memsim-analyze" "$P/lib/memsim/memsim-recorder" | tr '\n' ' ')" \
    "755 755 755 "

# The man pages: each renders without a warning, each option of the
# command's --help is in its page, and the preload's absolute path is in
# memsim-run(1) and libmemsim(7).
if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
    echo "# skip - the man pages rendered: man or groff is not installed (apt-get install man-db groff-base)"
else
for page in man1/memsim.1 man1/memsim-run.1 man1/memsim-analyze.1 man1/memsim-simulate.1 man7/libmemsim.7; do
    f=$P/share/man/$page
    MANWIDTH=80 man -l "$f" >"$TMP/man.out" 2>"$TMP/man.err"
    expect_eq "man -l $page: no warning" "$(cat "$TMP/man.err")" ""
    expect_eq "man -l $page: renders" "$(test -s "$TMP/man.out" && echo yes)" yes
    expect_eq "groff -ww $page: no warning" "$(groff -ww -z -k -man "$f" 2>&1)" ""
done
man_has_options() { # NAME HELP-TEXT PAGE
    missing=""
    for opt in $(grep -o -- '--[a-z][a-z0-9-]*' "$2" | sort -u); do
        MANWIDTH=200 man -l "$3" 2>/dev/null | grep -q -- "$opt" || missing="$missing $opt"
    done
    expect_eq "$1: every option of --help in the man page" "$missing" ""
}
"$P/bin/memsim" run --help >"$TMP/h.run"
man_has_options "memsim-run(1)" "$TMP/h.run" "$P/share/man/man1/memsim-run.1"
"$P/bin/memsim" simulate --help >"$TMP/h.sim"
man_has_options "memsim-simulate(1)" "$TMP/h.sim" "$P/share/man/man1/memsim-simulate.1"
"$P/bin/memsim-analyze" --help >"$TMP/h.an"
man_has_options "memsim-analyze(1)" "$TMP/h.an" "$P/share/man/man1/memsim-analyze.1"
for v in MEMSIM_OUTPUT MEMSIM_STRATEGY MEMSIM_DEVICE_SIZE MEMSIM_STACK_DEPTH MEMSIM_SAMPLE_MS \
    MEMSIM_TRACE_CHILDREN MEMSIM_MMAP MEMSIM_COMPRESS; do
    expect_eq "libmemsim(7) describes $v" \
        "$(MANWIDTH=200 man -l "$P/share/man/man7/libmemsim.7" 2>/dev/null | grep -c "^ *$v\$")" 1
done
expect_eq "memsim-run(1): LD_PRELOAD with the installed path" \
    "$(MANWIDTH=200 man -l "$P/share/man/man1/memsim-run.1" 2>/dev/null | grep -c "LD_PRELOAD=$P/lib/memsim/libmemsim.so ./program")" 1
LIBPATH=$(MANWIDTH=200 man -l "$P/share/man/man7/libmemsim.7" 2>/dev/null |
    sed -n 's/^ *LD_PRELOAD=\([^ ]*\) .*/\1/p')
expect_eq "libmemsim(7): the preload's absolute path" "$LIBPATH" "$P/lib/memsim/libmemsim.so"
fi
LIBPATH=$(sed -n 's/^LD_PRELOAD=\([^ ]*\) .*/\1/p' "$P/share/man/man7/libmemsim.7")
expect_eq "libmemsim(7)'s source: the preload's absolute path" "$LIBPATH" "$P/lib/memsim/libmemsim.so"

# pkg-config, and a program built with the phase markers from there.
PKG="env PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config"
expect_eq "memsim.pc: --cflags" "$(echo $($PKG --cflags memsim))" "-I$P/include"
expect_eq "memsim.pc: --modversion" "$($PKG --modversion memsim)" \
    "$(sed -n 's/^#define MEMSIM_VERSION "\(.*\)"/\1/p' include/memsim.h)"
cat >"$TMP/phased.c" <<'EOC'
#include <memsim.h>
#include <stdlib.h>
int main(void)
{
    MEMSIM_PHASE_BEGIN("work");
    free(malloc(100));
    MEMSIM_PHASE_END();
    return 0;
}
EOC
expect_status "a program with phase markers builds from the installed tree" 0 \
    sh -c "cc -std=c11 -Werror $($PKG --cflags memsim) -o '$TMP/phased' '$TMP/phased.c' $($PKG --libs memsim)"
expect_status "it runs without memsim" 0 "$TMP/phased"

# Run from there, with nothing of the build tree on the way.
D=$TMP/run
expect_status "installed memsim run --analyze: the program's status" 3 \
    env PATH=/usr/bin:/bin timeout "$LIMIT" "$P/bin/memsim" run --analyze --out "$D" "$PROG/touch_mb" 1 0 3
expect_eq "installed memsim run: the preload of lib/memsim" \
    "$(find "$D" -name 'memsim.touch_mb.*.jsonl*' | wc -l | tr -d ' ')" 1
expect_eq "installed memsim run: the trace's end is there (memsim-recorder found)" \
    "$("$BUILD/tracecheck" "$(find "$D" -name 'memsim.touch_mb.*' | head -n 1)" >/dev/null 2>&1 && echo ok)" ok
expect_eq "installed memsim run --analyze: bin/memsim-analyze's reports" \
    "$(test -s "$D/report.txt" && test -s "$D/report.json" && test -s "$D/report.html" && echo yes)" yes
expect_grep "installed: the again line names bin/memsim-analyze" "(again: $P/bin/memsim-analyze $D)\$" "$TMP/err"
expect_status "installed memsim analyze: runs" 0 "$P/bin/memsim" analyze --json "$D"
expect_status "installed memsim help run: exit 0" 0 "$P/bin/memsim" help run
D2=$TMP/by-hand
mkdir "$D2"
expect_status "LD_PRELOAD with the man page's path: runs" 0 \
    env MEMSIM_OUTPUT="$D2" LD_PRELOAD="$LIBPATH" "$PROG/touch_mb" 1 0 0
expect_eq "LD_PRELOAD with the man page's path: a trace" "$(ls "$D2" | grep -c '^memsim\.touch_mb\.')" 1

# make uninstall: those files go, nothing else.
mkdir -p "$P/share/doc"
echo theirs >"$P/bin/someone-else"
expect_status "make uninstall: exit 0" 0 inst uninstall
expect_eq "make uninstall: only what was not installed is left" \
    "$(cd "$P" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')" "./bin/someone-else "
expect_eq "make uninstall: lib/memsim is gone" "$(test -e "$P/lib/memsim" && echo there)" ""

summary
