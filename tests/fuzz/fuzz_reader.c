/*
 * fuzz_reader: libFuzzer over memsim-analyze's trace reader, summary,
 * findings and allocation sites (their bookkeeping: stacks and modules
 * are tracked, nothing is symbolized, so no file named by the input is
 * opened).  Any input is a "trace", plain or zstd-compressed; nothing
 * may crash, leak or trip a sanitizer.  `make fuzz` runs it briefly (FUZZ_SECONDS, default 20),
 * seeded with tests/fuzz/corpus/.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/consume/findings.h"
#include "analyzer/consume/mappings.h"
#include "analyzer/read/reader.h"
#include "analyzer/consume/sites.h"
#include "analyzer/consume/summary.h"
#include "analyzer/read/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    reader_t r;
    FILE *in = fmemopen((void *)data, size, "r");
    if (!in)
        return 0;
    if (reader_from(&r, in, "fuzz")) {
        fclose(in);
        return 0;
    }
    r.quiet = true; /* problems counted, not printed: fast, and stderr stays the fuzzer's */
    summary_t s;
    if (summary_init(&s)) {
        reader_close(&r);
        fclose(in);
        return 0;
    }
    symbols_t store;
    symbols_space_t space;
    sites_t sites;
    bool have_sites = symbols_init(&store) == 0;
    if (have_sites) {
        symbols_space_init(&space, &store);
        if (sites_init(&sites, &space)) {
            symbols_space_fini(&space);
            symbols_fini(&store);
            have_sites = false;
        }
    }
    mappings_t maps;
    mappings_init(&maps);
    event_t e;
    while (reader_next(&r, &e)) {
        summary_add(&s, &e);
        mappings_add(&maps, &e);
        if (have_sites)
            (void)sites_add_with(&sites, &e, &s); /* the tool's call; problems are its to report */
    }
    summary_finish(&s);
    if (have_sites) {
        sites_finish(&sites);
        sites_fini(&sites);
        symbols_space_fini(&space);
        symbols_fini(&store);
    }
    findings_config_t c = FINDINGS_DEFAULTS;
    findings_t f;
    findings_analyze(&s, &maps, &c, &f);
    mappings_fini(&maps);
    summary_fini(&s);
    reader_close(&r);
    fclose(in);
    return 0;
}
