/*
 * simulate: `memsim simulate`, the seeded workload through one or every
 * strategy of the simulated device, compared side by side.
 */
#ifndef MEMSIM_CLI_SIMULATE_H
#define MEMSIM_CLI_SIMULATE_H

/* Exit status: 0 ok, 1 a strategy broke an invariant (--check), 2 usage. */
int simulate_main(int argc, char **argv);

#endif
