/*
 * memsim.h: the public API of memsim.
 *
 * For now it carries the version; the interposer's phase markers
 * (memsim_phase_begin/end) arrive with libmemsim.so.
 */
#ifndef MEMSIM_H
#define MEMSIM_H

#define MEMSIM_VERSION "0.1.0"

#endif
