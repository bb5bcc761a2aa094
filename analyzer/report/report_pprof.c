/*
 * report_pprof: every process's allocation stacks as one pprof profile
 * (profile.proto, gzipped), for go tool pprof, speedscope, Grafana
 * Pyroscope and Parca.  See report.h.
 *
 * The message is built with protobuf-c from analyzer/report/profile.proto and
 * written through zlib's gzip stream.  One sample per allocation stack
 * that allocated, with six values:
 *   alloc_objects, alloc_space     calls and bytes requested
 *   inuse_objects, inuse_space     blocks and bytes live at the peak heap
 *   leaked_objects, leaked_space   blocks and bytes live at the end (the
 *                                  leak suppressions' left out)
 * inuse_space is the default.  In a sampled trace the bytes and the
 * calls are the analysis's estimates and the blocks are the sampled ones
 * (the profile's comment says so; its period is the sampling interval).  A stack's frames are its locations, leaf
 * first, without the allocator's and its wrappers' frames (the first
 * location is the allocating function, as memsim's own lists name it);
 * a location is a return address with its lines, inlined calls first and
 * the function they were inlined into last.  A process of a tree is a
 * label of its samples (pid, exe).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analyzer/escape.h"
#include "analyzer/report/groups.h"
#include "analyzer/report/profile.pb-c.h"
#include "analyzer/report/report.h"
#include "lib/grow.h"

typedef Perftools__Profiles__Profile pb_profile_t;
typedef Perftools__Profiles__ValueType pb_type_t;
typedef Perftools__Profiles__Sample pb_sample_t;
typedef Perftools__Profiles__Label pb_label_t;
typedef Perftools__Profiles__Mapping pb_mapping_t;
typedef Perftools__Profiles__Location pb_location_t;
typedef Perftools__Profiles__Line pb_line_t;
typedef Perftools__Profiles__Function pb_function_t;

#define NVALUES 6

/* A table of distinct keys (strings, or bytes) to dense ids from 0. */
typedef struct table_s {
    char **keys;
    size_t *lens;
    size_t n, cap, ncap;
    uint32_t *slots;   /* index + 1, 0 empty */
    size_t nslots;
} table_t;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static bool table_rehash(table_t *t, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < t->n; i++) {
        size_t at = hash_bytes(t->keys[i], t->lens[i]) & (nslots - 1);
        while (slots[at])
            at = (at + 1) & (nslots - 1);
        slots[at] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return true;
}

/* The id of key (n bytes), added when new; -1 without memory.  *added
 * says whether it was new. */
static int64_t table_id(table_t *t, const char *key, size_t n, bool *added)
{
    *added = false;
    if (2 * (t->n + 1) > t->nslots && !table_rehash(t, t->nslots ? 2 * t->nslots : 1024))
        return -1;
    size_t at = hash_bytes(key, n) & (t->nslots - 1);
    for (; t->slots[at]; at = (at + 1) & (t->nslots - 1)) {
        size_t i = t->slots[at] - 1;
        if (t->lens[i] == n && !memcmp(t->keys[i], key, n))
            return (int64_t)i;
    }
    if (!grow_room((void **)&t->keys, &t->cap, t->n, sizeof *t->keys, 256) ||
        !grow_room((void **)&t->lens, &t->ncap, t->n, sizeof *t->lens, 256))
        return -1;
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, key, n);
    copy[n] = '\0';
    t->keys[t->n] = copy;
    t->lens[t->n] = n;
    t->slots[at] = (uint32_t)(t->n + 1);
    *added = true;
    return (int64_t)t->n++;
}

static void table_free(table_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->lens);
    free(t->slots);
}

typedef struct builder_s {
    table_t strings, functions, locations, mappings;
    pb_function_t *fn;      /* by function id - 1 */
    size_t fcap;
    pb_location_t *loc;
    size_t lcap;
    pb_mapping_t *map;
    size_t mcap;
    pb_sample_t *smp;
    size_t nsmp, scap;
    bool nomem;
} builder_t;

static int64_t str(builder_t *b, const char *s)
{
    bool added;
    int64_t id = table_id(&b->strings, s ? s : "", s ? strlen(s) : 0, &added);
    if (id < 0)
        b->nomem = true;
    return id < 0 ? 0 : id;
}

static uint64_t function_id(builder_t *b, const symbols_frame_t *f)
{
    char label[64], key[1200];
    const char *name = f->function ? f->function : symbols_label(f, label, sizeof label);
    int n = snprintf(key, sizeof key, "%s%c%s", name, 0, f->file ? f->file : "");
    bool added;
    int64_t id = table_id(&b->functions, key, n > 0 && (size_t)n < sizeof key ? (size_t)n : sizeof key - 1,
                          &added);
    if (id < 0) {
        b->nomem = true;
        return 0;
    }
    if (added) {
        if (!grow_room((void **)&b->fn, &b->fcap, (size_t)id, sizeof *b->fn, 256)) {
            b->nomem = true;
            return 0;
        }
        pb_function_t fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
        fn.id = (uint64_t)id + 1;
        fn.name = fn.system_name = str(b, name);
        fn.filename = str(b, f->file);
        b->fn[id] = fn;
    }
    return (uint64_t)id + 1;
}

static uint64_t mapping_id(builder_t *b, const symbols_frame_t *f)
{
    if (!f->module)
        return 0;
    bool added;
    int64_t id = table_id(&b->mappings, f->module, strlen(f->module), &added);
    if (id < 0) {
        b->nomem = true;
        return 0;
    }
    uint64_t base = f->address - f->offset;
    if (added) {
        if (!grow_room((void **)&b->map, &b->mcap, (size_t)id, sizeof *b->map, 64)) {
            b->nomem = true;
            return 0;
        }
        pb_mapping_t m = PERFTOOLS__PROFILES__MAPPING__INIT;
        m.id = (uint64_t)id + 1;
        m.memory_start = base;
        m.memory_limit = f->address + 1;
        m.filename = str(b, f->module);
        m.has_functions = m.has_filenames = m.has_line_numbers = m.has_inline_frames = 1;
        b->map[id] = m;
    }
    pb_mapping_t *m = &b->map[id];
    if (base < m->memory_start)
        m->memory_start = base;
    if (f->address + 1 > m->memory_limit)
        m->memory_limit = f->address + 1;
    return (uint64_t)id + 1;
}

/* The location of one return address (module, address), its lines from
 * frame `skip` on (the allocator's inlined wrappers left out). */
static uint64_t location_id(builder_t *b, symbols_t *store, int32_t module, uint64_t address,
                            size_t skip)
{
    struct { int32_t module; uint32_t skip; uint64_t address; } key = {module, (uint32_t)skip, address};
    bool added;
    int64_t id = table_id(&b->locations, (const char *)&key, sizeof key, &added);
    if (id < 0) {
        b->nomem = true;
        return 0;
    }
    if (!added)
        return (uint64_t)id + 1;
    if (!grow_room((void **)&b->loc, &b->lcap, (size_t)id, sizeof *b->loc, 256)) {
        b->nomem = true;
        return 0;
    }
    const symbols_frame_t *f;
    size_t n = symbols_resolve(store, module, address, &f);
    pb_location_t l = PERFTOOLS__PROFILES__LOCATION__INIT;
    l.id = (uint64_t)id + 1;
    l.address = address;
    l.mapping_id = mapping_id(b, &f[0]);
    size_t nl = n > skip ? n - skip : 0;
    pb_line_t *lines = nl ? malloc(nl * sizeof *lines) : NULL;
    pb_line_t **ptrs = nl ? malloc(nl * sizeof *ptrs) : NULL;
    if (nl && (!lines || !ptrs)) {
        free(lines);
        free(ptrs);
        b->nomem = true;
        nl = 0;
    }
    for (size_t k = 0; k < nl; k++) {
        pb_line_t ln = PERFTOOLS__PROFILES__LINE__INIT;
        ln.function_id = function_id(b, &f[skip + k]);
        ln.line = f[skip + k].line;
        lines[k] = ln;
        ptrs[k] = &lines[k];
    }
    l.n_line = nl;
    l.line = ptrs;
    b->loc[id] = l;
    return (uint64_t)id + 1;
}

static int add_site(builder_t *b, process_t *pr, symbols_t *store, uint64_t id, bool label)
{
    const site_t *st = sites_get(&pr->sites, id);
    if (!st || !st->calls)
        return 0;
    if (!grow_room((void **)&b->smp, &b->scap, b->nsmp, sizeof *b->smp, 256))
        return -1;
    uint64_t *locs = malloc((st->nframes ? st->nframes : 1) * sizeof *locs);
    int64_t *values = malloc(NVALUES * sizeof *values);
    pb_label_t *labels = label ? calloc(2, sizeof *labels) : NULL;
    pb_label_t **lp = label ? malloc(2 * sizeof *lp) : NULL;
    if (!locs || !values || (label && (!labels || !lp))) {
        free(locs);
        free(values);
        free(labels);
        free(lp);
        return -1;
    }
    size_t nloc = 0;
    bool past = false; /* past the allocator's frames */
    for (uint32_t i = 0; i < st->nframes; i++) {
        int32_t module = st->modules ? st->modules[i] : SYMBOLS_NO_MODULE;
        size_t skip = 0;
        if (!past) {
            const symbols_frame_t *f;
            size_t n = symbols_resolve(store, module, st->frames[i], &f);
            while (skip < n && groups_is_allocator(f[skip].function))
                skip++;
            if (skip == n && i + 1 < st->nframes)
                continue; /* all the allocator's */
            if (skip == n)
                skip = n - 1; /* the outermost frame stays */
            past = true;
        }
        locs[nloc++] = location_id(b, store, module, st->frames[i], skip);
    }
    values[0] = (int64_t)sites_calls(st); /* a sampled trace's: estimated */
    values[1] = (int64_t)st->allocated;
    values[2] = (int64_t)sites_peak_blocks(&pr->sites, id);
    values[3] = (int64_t)sites_peak_bytes(&pr->sites, id);
    values[4] = st->suppressed ? 0 : (int64_t)st->live_blocks;
    values[5] = st->suppressed ? 0 : (int64_t)st->live;
    pb_sample_t s = PERFTOOLS__PROFILES__SAMPLE__INIT;
    s.n_location_id = nloc;
    s.location_id = locs;
    s.n_value = NVALUES;
    s.value = values;
    if (label) {
        pb_label_t l0 = PERFTOOLS__PROFILES__LABEL__INIT, l1 = PERFTOOLS__PROFILES__LABEL__INIT;
        l0.key = str(b, "pid");
        l0.num = pr->s.pid;
        l1.key = str(b, "exe");
        l1.str = str(b, pr->s.exe[0] ? frames_base_name(pr->s.exe) : "?");
        labels[0] = l0;
        labels[1] = l1;
        lp[0] = &labels[0];
        lp[1] = &labels[1];
        s.n_label = 2;
        s.label = lp;
    }
    b->smp[b->nsmp++] = s;
    return 0;
}

static void builder_free(builder_t *b)
{
    for (size_t i = 0; i < b->nsmp; i++) {
        free(b->smp[i].location_id);
        free(b->smp[i].value);
        if (b->smp[i].n_label)
            free(b->smp[i].label[0]);
        free(b->smp[i].label);
    }
    for (size_t i = 0; i < b->locations.n; i++) {
        if (b->loc[i].n_line)
            free(b->loc[i].line[0]);
        free(b->loc[i].line);
    }
    free(b->smp);
    free(b->loc);
    free(b->fn);
    free(b->map);
    table_free(&b->strings);
    table_free(&b->functions);
    table_free(&b->locations);
    table_free(&b->mappings);
}

/* Pointers to each element of an array of n structs of size each. */
static void **pointers(void *v, size_t n, size_t each)
{
    void **p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (char *)v + i * each;
    return p;
}

/* The sampling interval of the largest sampled trace (0: none sampled)
 * into *out, and the profile's comment saying what the values are,
 * into note. */
static void sampling_note(const process_t *procs, size_t n, uint64_t *out, char *note, size_t len)
{
    /* A sampled trace (MEMSIM_SAMPLE_BYTES): the sites' bytes and calls
     * are already the estimates (each sampled allocation weighs the bytes
     * it stands for), as Go's own heap profiles are scaled; the period
     * is the mean interval, and the objects live are sampled blocks. */
    uint64_t interval = 0;
    for (size_t i = 0; i < n; i++)
        if (procs[i].ok && procs[i].s.sample_bytes > interval)
            interval = procs[i].s.sample_bytes;
    if (interval)
        snprintf(note, len,
                 "memsim: a sampled trace, an allocation in about every %" PRIu64 " bytes: "
                 "alloc_objects and the *_space values are estimates, inuse_objects and "
                 "leaked_objects count the sampled blocks; inuse_* at the peak heap",
                 interval);
    else
        snprintf(note, len,
                 "memsim: every allocation recorded (no sampling); inuse_* at the peak heap");
    *out = interval;
}

/* buf (len bytes, the packed profile) gzipped to path (-: the standard
 * output), through a temporary file renamed into place; 0, or -1 after
 * one line on stderr. */
static int write_gzipped(const char *path, const uint8_t *buf, size_t len)
{
    int rc = 0;
    char tmp[4200];
    bool to_stdout = !strcmp(path, "-");
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    gzFile gz = to_stdout ? gzdopen(dup(STDOUT_FILENO), "wb") : gzopen(tmp, "wb");
    if (!gz || (len && gzwrite(gz, buf, (unsigned)len) != (int)len) | (gzclose(gz) != Z_OK) ||
        (!to_stdout && rename(tmp, path))) {
        escape_line(stderr, "%s: --pprof: cannot write %s: %s", ANALYZE_CMD,
                    to_stdout ? "the standard output" : path, strerror(errno ? errno : EIO));
        if (!to_stdout)
            unlink(tmp);
        rc = -1;
    }
    return rc;
}

int report_pprof(process_t *procs, size_t n, symbols_t *store, const char *path)
{
    builder_t b = {0};
    str(&b, ""); /* string_table[0] */
    static const char *const types[NVALUES][2] = {
        {"alloc_objects", "count"}, {"alloc_space", "bytes"},   {"inuse_objects", "count"},
        {"inuse_space", "bytes"},   {"leaked_objects", "count"}, {"leaked_space", "bytes"}};
    pb_type_t vt[NVALUES], *vtp[NVALUES];
    for (int i = 0; i < NVALUES; i++) {
        pb_type_t t = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        t.type = str(&b, types[i][0]);
        t.unit = str(&b, types[i][1]);
        vt[i] = t;
        vtp[i] = &vt[i];
    }
    size_t nok = 0;
    uint64_t first_t = UINT64_MAX, dur = 0;
    for (size_t i = 0; i < n; i++)
        if (procs[i].ok) {
            nok++;
            if (procs[i].s.start_unix_ns && procs[i].s.start_unix_ns < first_t)
                first_t = procs[i].s.start_unix_ns;
            uint64_t d = procs[i].s.last_t - procs[i].s.first_t;
            dur = d > dur ? d : dur;
        }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        process_t *pr = &procs[i];
        if (!pr->ok || !pr->have_sites)
            continue;
        for (uint64_t id = 0; id < sites_count(&pr->sites) && !rc; id++)
            rc = add_site(&b, pr, store, id, nok > 1);
    }
    if (rc || b.nomem) {
        fprintf(stderr, "%s: --pprof: out of memory\n", ANALYZE_CMD);
        builder_free(&b);
        return -1;
    }
    pb_profile_t p = PERFTOOLS__PROFILES__PROFILE__INIT;
    pb_type_t period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    period.type = str(&b, "space");
    period.unit = str(&b, "bytes");
    uint64_t interval;
    char note[320];
    sampling_note(procs, n, &interval, note, sizeof note);
    int64_t comment = str(&b, note);
    p.n_sample_type = NVALUES;
    p.sample_type = vtp;
    p.default_sample_type = vt[3].type;
    p.period_type = &period;
    p.period = interval ? (int64_t)interval : 1;
    p.n_comment = 1;
    p.comment = &comment;
    p.time_nanos = first_t == UINT64_MAX ? 0 : (int64_t)first_t;
    p.duration_nanos = (int64_t)dur;
    p.n_sample = b.nsmp;
    p.sample = (pb_sample_t **)pointers(b.smp, b.nsmp, sizeof *b.smp);
    p.n_location = b.locations.n;
    p.location = (pb_location_t **)pointers(b.loc, b.locations.n, sizeof *b.loc);
    p.n_function = b.functions.n;
    p.function = (pb_function_t **)pointers(b.fn, b.functions.n, sizeof *b.fn);
    p.n_mapping = b.mappings.n;
    p.mapping = (pb_mapping_t **)pointers(b.map, b.mappings.n, sizeof *b.map);
    p.n_string_table = b.strings.n;
    p.string_table = b.strings.keys;
    size_t len = perftools__profiles__profile__get_packed_size(&p);
    uint8_t *buf = p.sample && p.location && p.function && p.mapping ? malloc(len ? len : 1) : NULL;
    if (!buf) {
        fprintf(stderr, "%s: --pprof: out of memory\n", ANALYZE_CMD);
        rc = -1;
    } else {
        perftools__profiles__profile__pack(&p, buf);
        rc = write_gzipped(path, buf, len);
    }
    free(buf);
    free(p.sample);
    free(p.location);
    free(p.function);
    free(p.mapping);
    builder_free(&b);
    return rc;
}
