/*
 * escape: see escape.h.
 */
#include "analyzer/escape.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace/utf8.h"

/* Whether the character at s (len bytes of valid UTF-8) is written
 * escaped. */
static bool hostile(const unsigned char *s, size_t len, const char *also)
{
    if (len == 1)
        return s[0] < 0x20 || s[0] == 0x7f || s[0] == '\\' || (also && strchr(also, s[0]));
    return len == 2 && s[0] == 0xc2 && s[1] < 0xa0; /* C1: U+0080..U+009F */
}

static void put_hex(FILE *f, const unsigned char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\') {
            fputs("\\\\", f);
            continue;
        }
        char esc[4] = {'\\', 'x', hex[s[i] >> 4], hex[s[i] & 0xf]};
        fwrite(esc, 1, sizeof esc, f);
    }
}

void escape_write(FILE *f, const char *s, size_t n, const char *also)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
    while (p < end) {
        size_t len = utf8_len(p, (size_t)(end - p));
        if (len && !hostile(p, len, also)) {
            p += len; /* part of the run written as it is */
            continue;
        }
        fwrite(run, 1, (size_t)(p - run), f);
        put_hex(f, p, len ? len : 1);
        p += len ? len : 1;
        run = p;
    }
    fwrite(run, 1, (size_t)(p - run), f);
}

void escape_put(FILE *f, const char *s) { escape_write(f, s, strlen(s), NULL); }

void escape_html(FILE *f, const char *s)
{
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s), *run = p;
    while (p < end) {
        size_t len = utf8_len(p, (size_t)(end - p));
        const char *entity = NULL;
        if (len == 1) {
            switch (*p) {
            case '<': entity = "&lt;"; break;
            case '>': entity = "&gt;"; break;
            case '&': entity = "&amp;"; break;
            case '"': entity = "&quot;"; break;
            case '\'': entity = "&#39;"; break;
            default: break;
            }
        }
        if (len && !entity && !hostile(p, len, NULL)) {
            p += len;
            continue;
        }
        fwrite(run, 1, (size_t)(p - run), f);
        if (entity)
            fputs(entity, f);
        else
            put_hex(f, p, len ? len : 1);
        p += len ? len : 1;
        run = p;
    }
    fwrite(run, 1, (size_t)(p - run), f);
}

void escape_vline(FILE *f, const char *fmt, va_list ap)
{
    char small[1024], *text = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof small) {
        /* A long C++ name: format it whole; out of memory, what fits. */
        text = malloc((size_t)n + 1);
        if (text) {
            vsnprintf(text, (size_t)n + 1, fmt, again);
        } else {
            text = small;
            n = (int)sizeof small - 1;
        }
    }
    va_end(again);
    escape_write(f, text, (size_t)n, NULL);
    fputc('\n', f);
    if (text != small)
        free(text);
}

void escape_line(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    escape_vline(f, fmt, ap);
    va_end(ap);
}

json_t *escape_json(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s); /* NULL: not valid UTF-8 */
    if (j)
        return j;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    escape_put(f, s);
    fclose(f);
    j = json_stringn(text, len);
    free(text);
    return j;
}

void escape_copy(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len) {
        n = len - 1;
        /* Back to the start of the character the cut falls in: at most
         * three continuation bytes (10xxxxxx) precede a byte that is not. */
        for (int k = 0; k < 3 && n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80; k++)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}
