# sort.py N: build and sort a large structure, for bench/study.sh, run by
# python3 (pymalloc on, its default) and by PYTHONMALLOC=malloc python3
# (every object a malloc of its own).
#
# Builds N records (a tuple of a formatted key, an int, a float and a
# small list), an index dict from key to record, sorts them by key and
# then by (score, key), groups them into a dict of lists by the key's
# prefix, drops every third record and sorts what is left again.  A
# MINSTD generator, no random module: the same objects at every run.
# Prints a checksum.
import sys


def main(n):
    x = 12345
    recs = []
    for i in range(n):
        x = x * 48271 % 2147483647
        key = "%s-%06d" % ("abcdefghijklmnop"[x % 16] * (1 + x % 5), x % 1000003)
        recs.append((key, x % 9973, (x % 1000) / 7.0, [i, x % 97]))
    index = {r[0]: r for r in recs}
    by_key = sorted(recs, key=lambda r: r[0])
    by_score = sorted(recs, key=lambda r: (r[1], r[0]))
    groups = {}
    for r in by_key:
        groups.setdefault(r[0][:3], []).append(r)
    kept = [r for i, r in enumerate(by_score) if i % 3]
    kept.sort(key=lambda r: (r[2], r[0]), reverse=True)
    total = sum(r[1] for r in kept[:1000]) + len(index) + len(groups)
    print("checksum", total, by_key[0][0], by_score[-1][0], len(kept))


main(int(sys.argv[1]))
