/*
 * findings_compose: what a finding's bytes are made of (its
 * attribution: the allocator's, the program's mapping sites, file
 * pages, other memory) and what to do about it (its remediation: by
 * class and by what the bytes are mostly made of, or the user's own
 * text from --remediation).
 */
#ifndef MEMSIM_ANALYZER_FINDINGS_COMPOSE_H
#define MEMSIM_ANALYZER_FINDINGS_COMPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/consume/findings.h"

/* bytes of kind into f's attribution (nothing when 0 or when it is
 * full); what says what they are. */
void findings_attribute(finding_t *f, attribution_kind_t kind, uint64_t bytes, const char *what);

/* `bytes` of mappings over the mapping sites: in proportion to their
 * bytes at the mapped peak or at the end, whichever total is nearer the
 * mappings live at the time (`mapped`). */
void findings_attribute_mappings(finding_t *f, const mappings_t *m, uint64_t mapped,
                                 uint64_t bytes);

/* What a gap finding's bytes are made of: what grew between its base
 * (point b) and its peak (point p).  Returns the clean file pages' part. */
uint64_t findings_explain_gap(finding_t *f, const summary_t *s, const mappings_t *m, size_t b,
                              size_t p);

/* Appends the composition's gist to a gap finding's description. */
void findings_describe_gap(finding_t *f, const mappings_t *m);

/* f's remediation: the user's text for its class (and kind) from
 * c->remediation, else the built-in text. */
void findings_remediate(const findings_config_t *c, finding_t *f);

#endif
