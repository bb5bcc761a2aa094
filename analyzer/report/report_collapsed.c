/*
 * report_collapsed: every stack as a flame graph's collapsed line
 * (flamegraph.pl's input).  See report.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/escape.h"
#include "analyzer/report/report.h"

/* A frame name for a collapsed line: ';' separates frames and the last
 * blank the weight, so neither may appear inside one: blanks become '_'
 * (C++ names are full of them), ';' is escaped like the rest (\x3b). */
static void put_frame_name(const char *s)
{
    for (;;) {
        size_t n = strcspn(s, " ");
        escape_write(stdout, s, n, ";");
        if (!s[n])
            return;
        putchar('_');
        s += n + 1;
    }
}

/* Every stack with a weight, one line each: frames outermost first. */
static void print_collapsed(process_t *pr, symbols_t *store, sites_key_t key, bool prefix,
                            frames_t *fr)
{
    if (!pr->have_sites)
        return;
    for (uint64_t id = 0; id < sites_count(&pr->sites); id++) {
        uint64_t w = sites_key(&pr->sites, id, key);
        if (!w)
            continue;
        if (prefix) {
            put_frame_name(pr->s.exe[0] ? frames_base_name(pr->s.exe) : "?");
            printf(":%" PRId64 ";", pr->s.pid);
        }
        size_t n = frames_of(store, sites_get(&pr->sites, id), fr);
        if (!n)
            printf(id ? "[stack_%" PRIu64 "]" : "[no_stack]", id);
        for (size_t k = n; k-- > 0;) {
            char label[64];
            put_frame_name(fr->v[k].function ? fr->v[k].function
                                            : symbols_label(&fr->v[k], label, sizeof label));
            if (k)
                putchar(';');
        }
        printf(" %" PRIu64 "\n", w);
    }
}

void report_collapsed(process_t *procs, size_t n, symbols_t *store, sites_key_t key)
{
    frames_t fr = {0};
    for (size_t i = 0; i < n; i++)
        if (procs[i].ok)
            print_collapsed(&procs[i], store, key, n > 1, &fr);
    free(fr.v);
}
