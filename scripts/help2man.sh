#!/bin/sh
# help2man.sh NAME SECTION SUMMARY VERSION [TAIL]: a man page from a
# command's --help text on stdin, on stdout, so that the page and --help
# cannot say different things.  The text's shape (the one every memsim
# help text has):
#
#   usage: LINE / "   or: LINE"      -> SYNOPSIS
#   paragraphs before the first item -> DESCRIPTION
#   "  -x, --opt ARG   text" items   -> .TP items (under OPTIONS when they
#     and lines indented further        are the first section), a line
#                                       indented further continuing one
#   an upper-case line (EXAMPLES)    -> a section of its own
#   lines under EXAMPLES             -> kept as they are
#   other paragraphs                 -> .PP paragraphs
#
# TAIL, a file of roff sections (ENVIRONMENT, FILES, SEE ALSO), is
# appended as it is.
set -eu
name=$1 section=$2 summary=$3 version=$4 tail=${5:-}
awk -v name="$name" -v section="$section" -v summary="$summary" -v version="$version" '
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    return s
}
function line(s) {
    s = esc(s)
    if (s ~ /^[.\047]/) s = "\\&" s
    print s
}
function item(opt, text) {
    print ".TP"
    print "\\fB" esc(opt) "\\fR"
    if (text != "") line(text)
}
function section_head(s) {
    if (verbatim) { print ".fi"; verbatim = 0 }
    print ".SH " s
    insect = s; para = 0
}
BEGIN {
    up = toupper(name)
    print ".TH " esc(up) " " section " \"\" \"memsim " version "\" \"memsim manual\""
    print ".SH NAME"
    print esc(name) " \\- " esc(summary)
    state = "synopsis"
}
state == "synopsis" {
    if ($0 ~ /^(usage:|   or:|       [a-z])/) {
        if (!syn) { print ".SH SYNOPSIS"; print ".nf"; syn = 1 }
        s = $0; sub(/^(usage:|   or:) */, "", s); sub(/^ +/, "", s)
        line(s)
        next
    }
    if (syn) print ".fi"
    state = "body"; insect = ""
    print ".SH DESCRIPTION"
    desc = 1
}
/^$/ { para = 0; initem = 0; if (verbatim && insect != "EXAMPLES") { print ".fi"; verbatim = 0 } ; next }
/^[A-Z][A-Z ]+$/ { section_head($0); if ($0 == "EXAMPLES") { print ".nf"; verbatim = 1 }; next }
insect == "EXAMPLES" { s = $0; sub(/^  /, "", s); line(s); next }
/^  [^ ]/ || /^      -/ {
    s = $0; sub(/^ +/, "", s)
    if (s ~ /^-/) {
        # the option and its value names: words that start with "-" or
        # are upper case (DIR, A,B, PID[,PID]); the text is the rest.
        n = split(s, w, / +/); opt = ""; k = 1
        while (k <= n && (w[k] ~ /^-/ || w[k] ~ /^[A-Z][A-Z0-9_,.=|\[\]]*$/)) {
            opt = opt (k > 1 ? " " : "") w[k]; k++
        }
        text = ""
        for (; k <= n; k++) text = text (text != "" ? " " : "") w[k]
    } else if (match(s, /   *[^ ]/)) {
        opt = substr(s, 1, RSTART - 1); text = substr(s, RSTART + RLENGTH - 1)
    } else { opt = s; text = "" }
    if (!items && insect == "") { print ".SH OPTIONS"; insect = "OPTIONS" }
    items = 1
    item(opt, text); initem = 1; para = 1
    next
}
initem && /^          / { s = $0; sub(/^ +/, "", s); line(s); next }
{
    if (!para) { if (!desc) print ".PP"; para = 1 }
    desc = 0
    s = $0; sub(/^ +/, "", s); line(s)
}
END { if (verbatim) print ".fi" }
'
if [ -n "$tail" ]; then cat "$tail"; fi
