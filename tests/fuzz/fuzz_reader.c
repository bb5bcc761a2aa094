/*
 * fuzz_reader: libFuzzer over memsim-analyze's trace reader, summary and
 * findings.  Any input is a "trace"; nothing may crash, leak or trip a
 * sanitizer.  `make fuzz` runs it briefly (FUZZ_SECONDS, default 20),
 * seeded with tests/fuzz/corpus/.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/findings.h"
#include "analyzer/reader.h"
#include "analyzer/summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    reader_t r;
    memset(&r, 0, sizeof r);
    r.path = "fuzz";
    r.quiet = true; /* problems counted, not printed: fast, and stderr stays the fuzzer's */
    r.f = fmemopen((void *)data, size, "r");
    if (!r.f)
        return 0;
    summary_t s;
    if (summary_init(&s)) {
        reader_close(&r);
        return 0;
    }
    event_t e;
    while (reader_next(&r, &e))
        summary_add(&s, &e);
    summary_finish(&s);
    findings_config_t c = FINDINGS_DEFAULTS;
    json_t *f = findings_analyze(&s, &c);
    json_decref(f);
    summary_fini(&s);
    reader_close(&r);
    return 0;
}
