/*
 * smapsum: the heap's RSS and the anonymous RSS out of smaps.  See
 * smapsum.h.
 */
#include "allocators/smapsum.h"

#include <stdlib.h>
#include <string.h>

void smapsum_init(smapsum_t *s)
{
    memset(s, 0, sizeof *s);
}

/* A mapping's first line: "start-end perms offset dev inode [name]". */
static void mapping(smapsum_t *s, char *line)
{
    const char *field[6] = {line};
    char *p = line;
    for (int k = 1; k < 6; k++) { /* perms, offset, dev, inode, name */
        p = p ? strchr(p, ' ') : NULL;
        while (p && *p == ' ')
            *p++ = '\0';
        field[k] = p ? p : "";
    }
    bool unnamed = !strncmp(field[3], "00:00", 5) && field[3][5] == '\0' && !strcmp(field[4], "0");
    s->in_heap = !strcmp(field[5], "[heap]") || (unnamed && !field[5][0]);
    char *dash;
    uintptr_t start = (uintptr_t)strtoull(line, &dash, 16);
    uintptr_t end = *dash == '-' ? (uintptr_t)strtoull(dash + 1, NULL, 16) : start;
    s->skip = start < s->last_end && start > s->last_start;
    if (s->skip)
        return;
    if (start < s->last_end) { /* the last one again, newer */
        s->heap -= s->last_heap;
        s->anon -= s->last_anon;
    }
    s->last_start = start;
    s->last_end = end;
    s->last_heap = s->last_anon = 0;
}

void smapsum_line(smapsum_t *s, char *line)
{
    if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f'))
        mapping(s, line);
    else if (s->skip)
        return; /* counted in the mapping it was split from */
    else if (!strncmp(line, "Rss:", 4) && s->in_heap) {
        s->last_heap = strtoull(line + 4, NULL, 10) * 1024;
        s->heap += s->last_heap;
    } else if (!strncmp(line, "Anonymous:", 10)) {
        s->last_anon = strtoull(line + 10, NULL, 10) * 1024;
        s->anon += s->last_anon;
    }
}
