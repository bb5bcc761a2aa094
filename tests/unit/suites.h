/* One Suite per core module; each lives in tests/unit/test_<module>.c. */
#ifndef MEMSIM_TESTS_UNIT_SUITES_H
#define MEMSIM_TESTS_UNIT_SUITES_H

#include <check.h>

Suite *tree_suite(void);
Suite *addrmap_suite(void);
Suite *slotmap_suite(void);
Suite *hashtab_suite(void);
Suite *pool_suite(void);
Suite *strategy_suite(void);
Suite *buddy_suite(void);
Suite *caching_suite(void);
Suite *device_suite(void);
Suite *workload_suite(void);
Suite *units_suite(void);
Suite *out_suite(void);
Suite *childenv_suite(void);
Suite *livemap_suite(void);
Suite *reorder_suite(void);
Suite *stacks_suite(void);
Suite *stackids_suite(void);
Suite *walk_suite(void);
Suite *recorder_suite(void);
Suite *ring_suite(void);
Suite *recfmt_suite(void);
Suite *clock_suite(void);
Suite *replay_suite(void);
Suite *lean_suite(void);
Suite *reader_suite(void);
Suite *jsonw_suite(void);
Suite *config_suite(void);
Suite *procfs_suite(void);
Suite *stats_suite(void);
Suite *sites_suite(void);
Suite *symbols_suite(void);
Suite *escape_suite(void);
Suite *ptree_suite(void);
Suite *mappings_suite(void);
Suite *groups_suite(void);
Suite *downsample_suite(void);
Suite *timeline_suite(void);
Suite *layout_suite(void);
Suite *untraced_suite(void);
Suite *run_report_suite(void);
Suite *seccomp_suite(void);
Suite *report_suite(void);
Suite *catalog_suite(void);
Suite *smapsum_suite(void);
Suite *sample_suite(void);
Suite *findings_suite(void);
Suite *opts_suite(void);
Suite *touched_suite(void);

#endif
