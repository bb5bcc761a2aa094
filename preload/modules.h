/*
 * modules: the objects loaded in the traced process, for offline
 * symbolization.
 *
 * The list is taken at start and whenever a new stack is seen (the
 * loader's counters tell, cheaply, whether anything changed); libraries
 * loaded or unloaded since are posted as MSG_MODULE_LOAD and _UNLOAD,
 * in the ring's order: an unload comes after every heap event posted
 * before it.  A dlclose is looked at as it returns, so code loaded later
 * at an unloaded library's address is never walked by the old library's
 * frame rules.  memsim does not wrap dlopen: glibc resolves a dlopen's
 * search path from its caller, which would become memsim.
 */
#ifndef MEMSIM_PRELOAD_MODULES_H
#define MEMSIM_PRELOAD_MODULES_H

/* exe: the main program's path (its link map entry has no name). */
void modules_init(const char *exe);

/* Post what was loaded or unloaded since the last look (when tracing),
 * and make the walker forget its frame rules after any unload (traced
 * or not).  Called when tracing starts, at each new stack, and as each
 * dlclose returns. */
void modules_changed(void);

/* A new trace starts in a copy of this process (fork without an
 * inherited recorder, clone): forget what was posted, and the lock. */
void modules_reset(void);

#endif
