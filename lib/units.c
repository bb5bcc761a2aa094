/*
 * units: parsing and formatting byte sizes.  See units.h.
 */
#include "lib/units.h"

#include <ctype.h>
#include <stdio.h>

int units_parse_size(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    int shift = 0;
    switch (toupper((unsigned char)*s)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'P': shift = 50; break;
    default: break;
    }
    if (shift) {
        s++;
        if (*s == 'i' || *s == 'I')
            s++;
    }
    if (*s == 'B' || *s == 'b')
        s++;
    if (*s)
        return -1;
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

const char *units_format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, v < 10.0 ? "%.2f %s" : v < 100.0 ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}
