# churn.py N: dict, list and str churn for bench/workloads.sh, run as
# PYTHONMALLOC=malloc python3 -s churn.py N so that every object Python
# makes is a malloc of its own (pymalloc switched off).
#
# Each of N steps builds a record (a dict of a formatted key, its split
# parts, a joined text and a small list), files it in a dict of about
# 30,000 live records keyed by the key, and every 10,000 steps retires
# the oldest third: a working set that turns over, as in a cache or an
# index a long-running program keeps.  Prints a checksum.
import sys


def main(n):
    live = {}
    order = []
    total = 0
    for i in range(n):
        k = "key-%d-%s" % (i * 7919 % 50021, "abcdefgh"[i % 8])
        parts = k.split("-")
        rec = {"id": i, "key": k, "parts": parts,
               "text": " ".join((parts[1], k, str(i))), "hist": [i, i % 7]}
        live[k] = rec
        order.append(k)
        if len(order) >= 30000:
            old = order[:10000]
            del order[:10000]
            for o in old:
                r = live.pop(o, None)
                if r is not None:
                    total += len(r["text"]) + r["hist"][1]
    total += sum(len(r["text"]) for r in live.values())
    print("checksum", total, len(live))


main(int(sys.argv[1]))
