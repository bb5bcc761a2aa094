/*
 * tracein: plain or zstd-compressed trace input.  See tracein.h.
 */
#include "trace/tracein.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define IN_BUF (128u << 10)
/* Decoded bytes of a frame held back until its checksum is checked: a
 * damaged frame gives no records.  memsim's frames hold at most 1 MiB of
 * records (recorder/out.h); a larger frame (zstd's command line makes one
 * of the whole file) is handed out as it decodes, beyond this. */
#define HOLD_MAX (4u << 20)

struct tracein_s {
    FILE *f;
    bool own;           /* close f at the end */
    bool zst;
    ZSTD_DStream *ds;
    ZSTD_inBuffer zin;  /* compressed bytes not yet given to zstd */
    char *zbuf;
    size_t peeked;      /* plain: bytes of zbuf (the magic probe) not yet returned */
    size_t peek_at;
    bool in_frame;      /* a frame was started and not finished */
    bool eof;
    const char *error;
    char *hold;         /* decoded bytes of the current frame, not yet checked */
    size_t hold_len, hold_cap;
    size_t ready;       /* hold[0, ready): checked (or past HOLD_MAX), to hand out */
    size_t out_at;      /* hold[0, out_at): handed out */
};

static const unsigned char zmagic[4] = {0x28, 0xB5, 0x2F, 0xFD};

tracein_t *tracein_from(FILE *f)
{
    tracein_t *in = calloc(1, sizeof *in);
    char *zbuf = malloc(IN_BUF);
    if (!in || !zbuf) {
        free(in);
        free(zbuf);
        errno = ENOMEM;
        return NULL;
    }
    in->f = f;
    in->zbuf = zbuf;
    /* The first bytes tell what it is (a pipe cannot be rewound: what was
     * read to look stays in zbuf). */
    in->peeked = fread(zbuf, 1, sizeof zmagic, f);
    in->zst = in->peeked == sizeof zmagic && memcmp(zbuf, zmagic, sizeof zmagic) == 0;
    if (in->zst) {
        in->ds = ZSTD_createDStream();
        if (!in->ds || ZSTD_isError(ZSTD_initDStream(in->ds))) {
            tracein_close(in);
            errno = ENOMEM;
            return NULL;
        }
        in->zin = (ZSTD_inBuffer){zbuf, in->peeked, 0};
        in->peeked = 0;
    }
    return in;
}

tracein_t *tracein_open(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    if (!f)
        return NULL;
    tracein_t *in = tracein_from(f);
    if (!in) {
        int e = errno;
        if (f != stdin)
            fclose(f);
        errno = e;
        return NULL;
    }
    in->own = f != stdin;
    return in;
}

void tracein_close(tracein_t *in)
{
    if (!in)
        return;
    if (in->own && in->f)
        fclose(in->f);
    ZSTD_freeDStream(in->ds);
    free(in->zbuf);
    free(in->hold);
    free(in);
}

static size_t read_plain(tracein_t *in, char *buf, size_t n)
{
    size_t got = 0;
    if (in->peek_at < in->peeked) {
        got = in->peeked - in->peek_at < n ? in->peeked - in->peek_at : n;
        memcpy(buf, in->zbuf + in->peek_at, got);
        in->peek_at += got;
    }
    if (got < n)
        got += fread(buf + got, 1, n - got, in->f);
    if (got < n && ferror(in->f))
        in->error = strerror(errno ? errno : EIO);
    return got;
}

/* Decode more into hold: until a frame ends (its checksum checked: all
 * of hold is ready), hold reaches HOLD_MAX (ready too, unchecked), the
 * input ends (inside a frame: what decoded is ready, a cut is no
 * damage), or an error (the unchecked bytes are not handed out). */
static void decode_more(tracein_t *in)
{
    for (;;) {
        if (in->zin.pos == in->zin.size) {
            if (in->eof)
                return;
            size_t got = fread(in->zbuf, 1, IN_BUF, in->f);
            if (!got) {
                in->eof = true;
                if (ferror(in->f))
                    in->error = strerror(errno ? errno : EIO);
                else /* cut inside a frame (its writer killed): what decoded, unchecked */
                    in->ready = in->hold_len;
                return;
            }
            in->zin = (ZSTD_inBuffer){in->zbuf, got, 0};
        }
        if (in->hold_cap - in->hold_len < IN_BUF) {
            size_t cap = in->hold_cap ? in->hold_cap * 2 : 2 * IN_BUF;
            char *h = realloc(in->hold, cap);
            if (!h) {
                in->error = "out of memory for the decompressed data";
                return;
            }
            in->hold = h;
            in->hold_cap = cap;
        }
        ZSTD_outBuffer out = {in->hold + in->hold_len, in->hold_cap - in->hold_len, 0};
        size_t rc = ZSTD_decompressStream(in->ds, &out, &in->zin);
        if (ZSTD_isError(rc)) {
            in->error = ZSTD_getErrorName(rc); /* the unchecked part of hold goes */
            return;
        }
        in->hold_len += out.pos;
        in->in_frame = rc != 0; /* 0: a frame just ended, its checksum good */
        if (!in->in_frame || in->hold_len >= HOLD_MAX) {
            in->ready = in->hold_len;
            return;
        }
    }
}

static size_t read_zst(tracein_t *in, char *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (in->out_at == in->ready) {
            /* Everything checked is out: start over at the front. */
            if (in->hold_len > in->ready)
                memmove(in->hold, in->hold + in->ready, in->hold_len - in->ready);
            in->hold_len -= in->ready;
            in->ready = in->out_at = 0;
            if (in->error || (in->eof && in->zin.pos == in->zin.size))
                break;
            decode_more(in);
            if (in->ready == 0)
                break; /* the end, cut inside a frame, or an error */
        }
        size_t k = in->ready - in->out_at < n - done ? in->ready - in->out_at : n - done;
        memcpy((char *)buf + done, in->hold + in->out_at, k);
        in->out_at += k;
        done += k;
    }
    return done;
}

size_t tracein_read(tracein_t *in, void *buf, size_t n)
{
    return in->zst ? read_zst(in, buf, n) : read_plain(in, buf, n);
}

FILE *tracein_file(const tracein_t *in) { return in->f; }
bool tracein_compressed(const tracein_t *in) { return in->zst; }
bool tracein_cut(const tracein_t *in) { return in->zst && in->eof && in->in_frame; }
const char *tracein_error(const tracein_t *in) { return in->error; }
