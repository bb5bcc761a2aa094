/*
 * failmalloc: make one host allocation fail on purpose (SQLite's
 * out-of-memory loop).  The unit runner is linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so every call from
 * memsim's code (and Check's) goes through here.  Arm it only around the
 * code under test; call no Check assertion while it is armed.
 */
#ifndef MEMSIM_TESTS_UNIT_FAILMALLOC_H
#define MEMSIM_TESTS_UNIT_FAILMALLOC_H

#include <stdbool.h>

/* The n-th allocation from now (n >= 1) returns NULL; later ones succeed. */
void failmalloc_arm(long n);
/* Stop; true when the armed failure happened. */
bool failmalloc_disarm(void);

#endif
