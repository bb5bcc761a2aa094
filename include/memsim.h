/*
 * memsim.h: the public API of memsim.
 *
 * Phase markers: a program calls memsim_phase_begin("load") and
 * memsim_phase_end() around the parts it wants told apart in the
 * analysis; under libmemsim.so each becomes a `phase` record.
 *
 * The same program must build and run without memsim.  Link it with
 * nothing extra: the declarations below are weak, so when libmemsim.so
 * is not loaded the functions are NULL, and MEMSIM_PHASE_BEGIN /
 * MEMSIM_PHASE_END call them only when present:
 *
 *     #include <memsim.h>
 *     MEMSIM_PHASE_BEGIN("parse");
 *     ...
 *     MEMSIM_PHASE_END();
 *
 * (Calling memsim_phase_begin directly works too when the program is
 * always run under memsim; without it the call would jump to NULL.)
 */
#ifndef MEMSIM_H
#define MEMSIM_H

#define MEMSIM_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

void memsim_phase_begin(const char *name) __attribute__((weak));
void memsim_phase_end(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#define MEMSIM_PHASE_BEGIN(name)          \
    do {                                  \
        if (memsim_phase_begin)           \
            memsim_phase_begin(name);     \
    } while (0)
#define MEMSIM_PHASE_END()                \
    do {                                  \
        if (memsim_phase_end)             \
            memsim_phase_end();           \
    } while (0)

#endif
