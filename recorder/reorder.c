/*
 * reorder: a realloc that moved is taken where its new block was had.
 * See reorder.h.
 */
#include "recorder/reorder.h"

#include <stdlib.h>
#include <string.h>

#include "ipc/msg.h"

void reorder_init(reorder_t *ro, void (*take)(void *, const ring_slot_t *), void *ctx)
{
    ring_slot_t *wait = ro->wait;
    unsigned cap = ro->cap;
    memset(ro, 0, sizeof *ro);
    ro->wait = wait;
    ro->cap = cap;
    ro->take = take;
    ro->ctx = ctx;
}

void reorder_free(reorder_t *ro)
{
    free(ro->wait);
    ro->wait = NULL;
    ro->n = ro->cap = 0;
}

static bool moved(const ring_slot_t *m)
{
    return m->kind == MSG_REALLOC && m->b && m->b != m->a && !(m->e & MSG_REALLOC_IN_ORDER);
}

/* Take wait[i] and close the gap.  A waiting realloc that gives back
 * the address wait[i] moves to goes first (that address was given back
 * inside its call, before wait[i]'s returned it), and so on down the
 * chain: the chain is kept in the room it frees, wait[n, top), the last
 * found lowest and taken first.  No recursion: a chain may be as long as
 * there are threads. */
static void take_at(reorder_t *ro, unsigned i)
{
    unsigned top = ro->n;
    for (;;) {
        ring_slot_t m = ro->wait[i];
        memmove(&ro->wait[i], &ro->wait[i + 1], (ro->n - i - 1) * sizeof ro->wait[0]);
        ro->wait[--ro->n] = m;
        unsigned j = 0;
        while (j < ro->n && ro->wait[j].a != m.b)
            j++;
        if (j == ro->n)
            break;
        ro->early++;
        i = j;
    }
    for (unsigned k = ro->n; k < top; k++) {
        ring_slot_t m = ro->wait[k];
        ro->take(ro->ctx, &m);
    }
}

/* Room for one more waiting: grown, or the oldest taken early. */
static void make_room(reorder_t *ro)
{
    if (ro->n < ro->cap)
        return;
    unsigned cap = ro->cap ? ro->cap * 2 : REORDER_WAITING_MIN;
    /* A slot is a cache line, and aligned as one: no realloc. */
    ring_slot_t *w = cap <= REORDER_WAITING_MAX ? aligned_alloc(_Alignof(ring_slot_t), cap * sizeof *w) : NULL;
    if (w) {
        if (ro->n)
            memcpy(w, ro->wait, ro->n * sizeof *w);
        free(ro->wait);
        ro->wait = w;
        ro->cap = cap;
        return;
    }
    ro->early++;
    take_at(ro, 0);
}

/* The messages that may pass a waiting realloc: heap and mapping events
 * and what carries no turn of the process's life. */
static bool may_pass(const ring_slot_t *m)
{
    switch (m->kind) {
    case MSG_ALLOC:
    case MSG_FREE:
    case MSG_REALLOC:
    case MSG_REALLOC_DONE:
    case MSG_QUIET:
    case MSG_MMAP:
    case MSG_MUNMAP:
    case MSG_MREMAP:
    case MSG_STACK:
    case MSG_MALLINFO:
        return true;
    default:
        return false;
    }
}

void reorder_input(reorder_t *ro, const ring_slot_t *m)
{
    if (m->kind == MSG_REALLOC_DONE) {
        for (unsigned i = 0; i < ro->n; i++)
            if (ro->wait[i].tid == m->tid && ro->wait[i].a == m->a && ro->wait[i].b == m->b) {
                take_at(ro, i);
                return;
            }
        return; /* taken early already */
    }
    if (!may_pass(m)) {
        reorder_flush(ro);
    } else if (m->kind != MSG_STACK && m->kind != MSG_MALLINFO) {
        /* A waiting realloc goes first when this names its old address
         * as a block its thread had (an allocation, a free, the old block
         * of a realloc), and when this is of its thread (its done was
         * lost).  A realloc moving onto that address is not such a
         * sign: its slot was claimed before it had the address; when it
         * is taken, take_at takes the one waiting first. */
        for (unsigned i = 0; i < ro->n;) {
            if (ro->wait[i].a == m->a || ro->wait[i].tid == m->tid) {
                ro->early++;
                take_at(ro, i);
            } else {
                i++;
            }
        }
    }
    if (moved(m)) {
        make_room(ro);
        ro->wait[ro->n++] = *m;
        return;
    }
    ro->take(ro->ctx, m);
}

void reorder_flush(reorder_t *ro)
{
    while (ro->n)
        take_at(ro, 0);
}
