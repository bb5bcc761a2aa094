/*
 * args: value parsers for command-line options.  See args.h.
 */
#include "lib/args.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/units.h"

int args_count(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !isdigit((unsigned char)*s)) {
        fprintf(stderr, "%s: %s: \"%s\" is not a whole number\n", cmd, opt, s ? s : "");
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) {
        fprintf(stderr, "%s: %s: \"%s\" is not a whole number\n", cmd, opt, s);
        return -1;
    }
    if (v < min) {
        fprintf(stderr, "%s: %s: %s is below the minimum %" PRIu64 "\n", cmd, opt, s, min);
        return -1;
    }
    *out = v;
    return 0;
}

int args_size(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t *out)
{
    uint64_t v;
    if (units_parse_size(s, &v)) {
        fprintf(stderr, "%s: %s: \"%s\" is not a size (examples: 4096, 64K, 512M, 2G)\n", cmd,
                opt, s ? s : "");
        return -1;
    }
    if (v < min) {
        fprintf(stderr, "%s: %s: %s is below the minimum %" PRIu64 " bytes\n", cmd, opt, s, min);
        return -1;
    }
    *out = v;
    return 0;
}

int args_real(const char *cmd, const char *opt, const char *s, double lo, double hi,
              double *out)
{
    char *end;
    errno = 0;
    double v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || errno || *end || !isfinite(v)) {
        fprintf(stderr, "%s: %s: \"%s\" is not a finite number\n", cmd, opt, s ? s : "");
        return -1;
    }
    if (v < lo || v > hi) {
        fprintf(stderr, "%s: %s: %s is not in [%g, %g]\n", cmd, opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}
