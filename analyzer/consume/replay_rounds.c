/*
 * replay_rounds: the later rounds of a replay set.  See replay_rounds.h.
 *
 * Each submitted batch is appended to the spool (the format below) while
 * the set has later strategies; at the results they replay it, each on
 * a thread of the round's, made when its thread takes it and freed once
 * reduced to its result, width of them at once.
 */
#include "analyzer/consume/replay_rounds.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- joining ------------------------------------------------------------------------------ */

bool replay_rounds_defer(replay_set_t *s, const char *strategy, uint64_t device_size)
{
    if (s->width && s->n >= s->width && strlen(strategy) < sizeof s->later[0].name &&
        (s->nlater || (!s->spool.err && spool_open(&s->spool) == 0))) {
        /* a later round's: made again when its round starts */
        later_t *l = &s->later[s->nlater++];
        snprintf(l->name, sizeof l->name, "%s", strategy);
        l->device_size = device_size;
        return true;
    }
    if (s->width && s->spool.err && !s->note[0])
        snprintf(s->note, sizeof s->note,
                 "cannot make the spool of the strategies' later rounds in %s: %s: "
                 "all replayed at once",
                 s->spool.dir, strerror(s->spool.err));
    return false;
}

/* ---- the spool --------------------------------------------------------------------------- */

/* The strategies beyond the set's width replay after the trace, from a
 * spool of the operations as resolved, batch by batch.  Each operation
 * is a varint v = rec << 3 | kind (7 bits a byte, low first), then:
 *   SP_FREE     varint size: the bytes its record was allocated with;
 *   SP_ALLOC16  varint size: alignment 16, no record before at the address;
 *   SP_ALLOC    one byte log2(align), | 0x80 when a record before follows,
 *               varint size, then that record and the bytes it was
 *               allocated with (varints);
 *   SP_MARK     nothing (rec 0);
 *   SP_END      the end of a batch (rec 0).
 * So a replay from the spool needs no array of sizes by record.  The
 * batches keep their bounds: a record a batch ends is reused only in a
 * later one, as when it was fed. */
enum { SP_FREE, SP_ALLOC16, SP_ALLOC, SP_MARK, SP_END };
#define SP_MAX_OP 32 /* bytes an operation takes at most: 5 + 1 + 10 + 5 + 10 */

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* A varint at *p, or false past end (a spool cut short). */
static inline bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static void catch_up(replay_set_t *s);

/* Append batch b to the spool; when it cannot be written, replay the
 * later strategies from what it has and feed them live from here on. */
void replay_rounds_spool(replay_set_t *s, const batch_t *b)
{
    uint8_t *p = spool_room(&s->spool, b->n * SP_MAX_OP + 1), *p0 = p;
    if (!p) {
        catch_up(s);
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        const op_t *op = &b->ops[i];
        if (op->rec == NO_REC) {
            *p++ = SP_MARK;
        } else if (!op->align) {
            p = put_varint(p, (uint64_t)op->rec << 3 | SP_FREE);
            p = put_varint(p, op->size);
        } else if (op->align == 16 && op->prev == NO_REC) {
            p = put_varint(p, (uint64_t)op->rec << 3 | SP_ALLOC16);
            p = put_varint(p, op->size);
        } else {
            p = put_varint(p, (uint64_t)op->rec << 3 | SP_ALLOC);
            *p++ = (uint8_t)(__builtin_ctzll(op->align) | (op->prev != NO_REC ? 0x80 : 0));
            p = put_varint(p, op->size);
            if (op->prev != NO_REC) {
                p = put_varint(p, op->prev);
                p = put_varint(p, s->rsize[op->prev]);
            }
        }
    }
    *p++ = SP_END;
    spool_commit(&s->spool, (size_t)(p - p0));
}

#define SP_READ (1u << 20) /* bytes read back at a time */

/* Replay the spool's first `upto` bytes through st (made with room for
 * s->nrec records at least): the batches fed so far.  0, or -1 with
 * errno. */
static int replay_spooled(const replay_set_t *s, strategy_t *st, uint64_t upto)
{
    batch_t *b = malloc(sizeof *b);
    uint64_t *pairs = malloc(2 * BATCH * sizeof *pairs);
    uint8_t *buf = malloc(SP_READ);
    int rc = -1;
    if (!b || !pairs || !buf) {
        errno = ENOMEM;
        goto out;
    }
    sizes_t sz = {.pairs = pairs};
    b->n = 0;
    uint64_t off = 0; /* the spool's next byte to read */
    size_t have = 0;  /* bytes in buf */
    const uint8_t *p = buf;
    for (;;) {
        const uint8_t *end = buf + have;
        if ((size_t)(end - p) < SP_MAX_OP && off < upto) { /* read on */
            size_t left = (size_t)(end - p);
            memmove(buf, p, left);
            size_t want = SP_READ - left;
            if (want > upto - off)
                want = (size_t)(upto - off);
            long k = spool_read(&s->spool, off, buf + left, want);
            if (k <= 0) {
                if (k == 0)
                    errno = EIO; /* shorter than written */
                goto out;
            }
            off += (uint64_t)k;
            have = left + (size_t)k;
            p = buf;
            end = buf + have;
        }
        if (p == end)
            break;
        uint64_t v, size = 0, prev = NO_REC, prev_size;
        if (!get_varint(&p, end, &v))
            goto corrupt;
        uint64_t rec = v >> 3;
        unsigned kind = v & 7;
        if (kind == SP_END) {
            replay_batch(st, b, &sz);
            st->done++;
            b->n = 0;
            sz.npairs = 0;
            continue;
        }
        if (b->n == BATCH || (kind != SP_MARK && rec >= s->nrec))
            goto corrupt;
        op_t *op = &b->ops[b->n++];
        switch (kind) {
        case SP_FREE:
            if (!get_varint(&p, end, &size))
                goto corrupt;
            *op = (op_t){.size = size, .align = 0, .rec = (uint32_t)rec};
            break;
        case SP_ALLOC16:
            if (!get_varint(&p, end, &size))
                goto corrupt;
            *op = (op_t){.size = size, .align = 16, .rec = (uint32_t)rec, .prev = NO_REC};
            break;
        case SP_ALLOC: {
            if (p == end)
                goto corrupt;
            uint8_t a = *p++;
            if (!get_varint(&p, end, &size))
                goto corrupt;
            if (a & 0x80) {
                if (!get_varint(&p, end, &prev) || prev >= s->nrec ||
                    !get_varint(&p, end, &prev_size))
                    goto corrupt;
                pairs[2 * sz.npairs] = prev;
                pairs[2 * sz.npairs + 1] = prev_size;
                sz.npairs++;
            }
            *op = (op_t){.size = size,
                         .align = 1ull << (a & 63),
                         .rec = (uint32_t)rec,
                         .prev = (uint32_t)prev};
            break;
        }
        case SP_MARK:
            *op = (op_t){.rec = NO_REC};
            break;
        default:
            goto corrupt;
        }
    }
    rc = b->n ? (errno = EIO, -1) : 0; /* (every batch ends with SP_END) */
    goto out;
corrupt:
    errno = EIO;
out:
    free(buf);
    free(pairs);
    free(b);
    return rc;
}

/* The spool cannot be written: replay the later strategies from what it
 * has (every batch submitted so far), then feed them live with the rest
 * from the next batch on: the same figures, every strategy at once.  The
 * feeding thread, at a batch's submission. */
static void catch_up(replay_set_t *s)
{
    snprintf(s->note, sizeof s->note,
             "cannot write the spool of the strategies' later rounds in %s: %s: "
             "all replayed at once",
             s->spool.dir, strerror(s->spool.err));
    pthread_mutex_lock(&s->mu);
    replay_wait_done_locked(s, s->submitted); /* every live strategy idle */
    pthread_mutex_unlock(&s->mu);
    for (size_t j = 0; j < s->nlater; j++) {
        strategy_t st;
        char err[256];
        if (replay_strategy_init(s, &st, s->later[j].name, s->later[j].device_size, s->cap, err,
                                 sizeof err) == 0 &&
            replay_spooled(s, &st, spool_size(&s->spool)) == 0) {
            st.done = s->submitted;
            pthread_mutex_lock(&s->mu);
            s->st[s->n++] = st;
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        replay_strategy_fini(&st);
        s->failed_memory = true; /* no memory to go on with: the replay stops here */
    }
    s->nlater = 0;
    s->width = 0;
    spool_close(&s->spool);
}

/* ---- the later rounds --------------------------------------------------------------------- */

/* The later strategies, claimed one at a time by the round's threads:
 * in the order added, but a device (several times a lean form's memory)
 * waits while another runs if a lean one can go instead. */
typedef struct rounds_s {
    replay_set_t *s;
    uint64_t upto;        /* the spool's bytes to replay */
    replay_result_t *out; /* per later strategy */
    bool ok[REPLAY_MAX_STRATEGIES];
    pthread_mutex_t mu; /* the fields below, s->note */
    bool taken[REPLAY_MAX_STRATEGIES];
    unsigned devices; /* devices replaying now */
} rounds_t;

/* Whether later strategy j replays through a device. */
static bool later_device(const replay_set_t *s, size_t j)
{
    return s->keep_maps || !replay_lean(s->later[j].name);
}

/* The next strategy to replay, taken; SIZE_MAX when none is left. */
static size_t claim_later_locked(rounds_t *r)
{
    size_t pick = SIZE_MAX;
    for (size_t j = 0; j < r->s->nlater; j++) {
        if (r->taken[j])
            continue;
        if (pick == SIZE_MAX)
            pick = j;
        if (!r->devices || !later_device(r->s, j)) {
            pick = j;
            break;
        }
    }
    if (pick != SIZE_MAX) {
        r->taken[pick] = true;
        r->devices += later_device(r->s, pick);
    }
    return pick;
}

/* Later strategy j, from its state's making to its result, into
 * r->out[j]; its state is freed before it returns. */
static void replay_later(rounds_t *r, size_t j)
{
    replay_set_t *s = r->s;
    const later_t *l = &s->later[j];
    strategy_t st;
    char err[400];
    /* room for the records made, not for the set's next doubling */
    int rc = replay_strategy_init(s, &st, l->name, l->device_size, s->nrec, err, sizeof err);
    bool memory = rc != 0 && errno == ENOMEM;
    if (rc == 0 && replay_spooled(s, &st, r->upto)) {
        memory = errno == ENOMEM;
        snprintf(err, sizeof err, "cannot read its spool back in %s: %s", s->spool.dir,
                 strerror(errno));
        rc = -1;
    }
    if (rc == 0) {
        replay_strategy_result(s, &st, &r->out[j]);
        r->ok[j] = true;
        replay_strategy_fini(&st);
        replay_give_back();
        return;
    } else {
        /* Where the trace's replay ran out of memory already, its line
         * said so: one line for the memory, not one more a strategy. */
        pthread_mutex_lock(&r->mu);
        if (!s->note[0] && !(memory && s->failed_memory))
            snprintf(s->note, sizeof s->note, memory ? "out of memory: %s left out (%s)" :
                     "%s left out: %s", l->name, err);
        pthread_mutex_unlock(&r->mu);
    }
    replay_strategy_fini(&st);
}

static void *rounds_worker(void *arg)
{
    rounds_t *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        size_t j = claim_later_locked(r);
        pthread_mutex_unlock(&r->mu);
        if (j == SIZE_MAX)
            return NULL;
        replay_later(r, j);
        pthread_mutex_lock(&r->mu);
        r->devices -= later_device(r->s, j);
        pthread_mutex_unlock(&r->mu);
    }
}

/* Replay the later strategies from the spool, at most s->width at once
 * (the caller's thread and width - 1 of their own); their results after
 * the n given, in the order they were added.  The number of results. */
size_t replay_rounds_run(replay_set_t *s, replay_result_t *out, size_t n)
{
    rounds_t r = {.s = s, .upto = spool_size(&s->spool)};
    replay_result_t later[REPLAY_MAX_STRATEGIES];
    r.out = later;
    pthread_mutex_init(&r.mu, NULL);
    pthread_t th[REPLAY_MAX_STRATEGIES];
    unsigned nth = 0;
    for (unsigned i = 1; i < s->width && i < s->nlater; i++)
        if (pthread_create(&th[nth], NULL, rounds_worker, &r) == 0)
            nth++;
    rounds_worker(&r);
    for (unsigned i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&r.mu);
    for (size_t j = 0; j < s->nlater; j++)
        if (r.ok[j])
            out[n++] = later[j];
    return n;
}
