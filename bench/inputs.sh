#!/bin/sh
# bench-inputs: the generated inputs of bench/workloads.sh's real programs.
#
#   sh bench/inputs.sh DIR WORDS ROWS
#
#   DIR/words.txt    WORDS words of text, 12 a line, for perl (words.pl):
#                    a vocabulary of 20,000 made-up words drawn with a
#                    Zipf-like law (rank = 20000^u, u uniform), as in
#                    natural text: a few words are everywhere, most rare
#   DIR/inserts.sql  for sqlite3: a table with two indexes, ROWS INSERT
#                    statements in one transaction (random names, cities,
#                    scores and notes), then two queries over the indexes
#
# Deterministic: the same arguments give the same bytes on any machine
# (a MINSTD generator in awk, exact in a double, no rand()).  About 2 s
# for a million words and 200,000 rows.
set -eu
if [ $# -ne 3 ]; then
    echo "usage: sh bench/inputs.sh DIR WORDS ROWS" >&2
    exit 2
fi
DIR=$1
WORDS=$2
ROWS=$3
mkdir -p "$DIR"

# The generator's state is x in [1, 2^31 - 2]; u() is uniform in (0, 1).
LCG='function u() { x = (x * 48271) % 2147483647; return x / 2147483647 }
function word(r,   s) { # r >= 0 in base 26, a syllable a digit, two at least
    s = substr(syl, 1 + 2 * (r % 26), 2)
    do { r = int(r / 26); s = s substr(syl, 1 + 2 * (r % 26), 2) } while (r >= 26)
    return s
}
BEGIN { syl = "babebibobudadedidodukakekikokulalelilolumamemimomuna"; x = seed }'

awk -v seed=12345 -v n="$WORDS" "$LCG"'
BEGIN {
    for (i = 1; i <= n; i++) {
        r = int(exp(u() * log(20000))) - 1
        printf "%s%s", word(r), (i % 12 == 0 || i == n) ? "\n" : " "
    }
}' >"$DIR/words.txt"

awk -v seed=67890 -v n="$ROWS" "$LCG"'
BEGIN {
    print "PRAGMA journal_mode = OFF;"
    print "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, score INTEGER, note TEXT);"
    print "CREATE INDEX people_name ON people (name);"
    print "CREATE INDEX people_city_score ON people (city, score);"
    print "BEGIN;"
    for (i = 1; i <= n; i++) {
        name = word(int(u() * 400000))
        city = word(int(exp(u() * log(3000))))
        note = ""
        for (j = int(u() * 8); j >= 0; j--) note = note " " word(int(u() * 5000))
        printf "INSERT INTO people (name, city, score, note) VALUES (%c%s %s%c, %c%s%c, %d, %c%s%c);\n", \
            39, name, word(i % 997), 39, 39, city, 39, int(u() * 100000), 39, note, 39
    }
    print "COMMIT;"
    print "SELECT city, count(*), avg(score) FROM people GROUP BY city ORDER BY 2 DESC, 1 LIMIT 5;"
    printf "SELECT count(*) FROM people WHERE name >= %cba%c AND name < %cca%c;\n", 39, 39, 39, 39
}' >"$DIR/inserts.sql"
