/*
 * units: byte sizes as people write them ("512M", "2G", "64KiB",
 * "4096") and as reports print them ("1.5 MiB").  Suffixes are binary
 * (K = 1024); an optional "i" and "B" may follow, any case.
 */
#ifndef MEMSIM_LIB_UNITS_H
#define MEMSIM_LIB_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parse s into *out.  0, or -1 when s is empty, negative, has anything
 * but digits and one suffix, or overflows 64 bits. */
int units_parse_size(const char *s, uint64_t *out);

/* "0 B", "512 B", "1.5 KiB", "24.0 GiB" into buf; returns buf. */
const char *units_format_bytes(uint64_t bytes, char *buf, size_t len);

#endif
