/*
 * progress: see progress.h.
 */
#include "analyzer/progress.h"

#include "analyzer/escape.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static progress_t *active; /* the one drawing now, for progress_interrupt */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void progress_begin(progress_t *p, progress_mode_t mode, const char *label, uint64_t total)
{
    *p = (progress_t){.label = label, .total = total};
    p->enabled = mode == PROGRESS_ALWAYS || (mode == PROGRESS_AUTO && isatty(2));
    p->after_ns = mode == PROGRESS_ALWAYS ? 0 : PROGRESS_AFTER_NS;
    p->start_ns = p->last_ns = now_ns();
    if (p->enabled)
        active = p;
}

void progress_update(progress_t *p, uint64_t done, uint64_t records)
{
    if (!p->enabled)
        return;
    uint64_t now = now_ns();
    if (now - p->start_ns < p->after_ns || (p->shown && now - p->last_ns < 250000000ull))
        return;
    double secs = (double)(now - p->start_ns) / 1e9;
    double rate = secs > 0 ? (double)records / secs / 1e6 : 0;
    /* The label is a path: escaped, unlike the line's own \r and erase. */
    fputs("\rmemsim-analyze: ", stderr);
    escape_put(stderr, p->label);
    if (p->total)
        fprintf(stderr, ": %3.0f%% (%.1f M records, %.1f M/s)\033[K",
                100.0 * (double)done / (double)p->total, (double)records / 1e6, rate);
    else
        fprintf(stderr, ": %.1f M records (%.1f M/s)\033[K", (double)records / 1e6, rate);
    fflush(stderr);
    p->shown = true;
    p->last_ns = now;
}

void progress_end(progress_t *p)
{
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = false;
    if (active == p)
        active = NULL;
}

void progress_interrupt(void)
{
    if (active && active->shown) {
        fputs("\r\033[K", stderr);
        active->shown = false;
    }
}
