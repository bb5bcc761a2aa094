/*
 * strcopy: a string into a fixed buffer, cut to fit.
 *
 * For fixed fields filled where nothing may allocate or format (the
 * preload's hooks and fork handlers): only the string's bytes and its
 * '\0' are written, never the rest of the buffer.
 */
#ifndef MEMSIM_LIB_STRCOPY_H
#define MEMSIM_LIB_STRCOPY_H

#include <stddef.h>
#include <string.h>

/* src into dst (cap bytes, cap >= 1), cut to cap - 1 bytes, with its '\0'. */
static inline void str_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

#endif
