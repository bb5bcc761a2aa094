# threads.py: four producer threads build records (dicts of strings and
# lists) and pass them through a queue to four consumer threads, which
# keep the newest WINDOW of them and drop the rest: every record is
# allocated by one thread and freed by another.  Deterministic output
# (the records' checksum); run with PYTHONMALLOC=malloc so that every
# object is a malloc (bench/allocators.sh, bench/study/workloads.sh).
#
#   python3 threads.py N      N records per producer
import collections
import queue
import sys
import threading

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
WINDOW = 20000
q = queue.Queue(maxsize=256)
sums = [0] * 4


def produce(k):
    for i in range(N):
        words = ["w%d-%d-%d" % (k, i, j) for j in range(8)]
        q.put({"id": i, "who": k, "words": words, "size": len(words) * (i % 13)})
    q.put(None)


def consume(k):
    kept = collections.deque()
    s = 0
    while True:
        r = q.get()
        if r is None:
            break
        s += r["id"] + len(r["words"][3])
        kept.append(r)
        if len(kept) > WINDOW:
            kept.popleft()
    sums[k] = s


threads = [threading.Thread(target=produce, args=(k,)) for k in range(4)]
threads += [threading.Thread(target=consume, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sum(sums))
