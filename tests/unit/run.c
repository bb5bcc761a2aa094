/*
 * The unit test runner: one Check suite per core module.
 * CK_RUN_SUITE=pool selects one suite, as Check's environment allows.
 *
 * Check's timeouts are wall time: they are there to end a hung test,
 * not to measure one (bench/ does).  A test of 0.5 s took over Check's
 * default 4 s under AddressSanitizer on a loaded 2-core machine, so every
 * timeout is multiplied by 10 (CK_TIMEOUT_MULTIPLIER, unless set).
 */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/suites.h"

int main(void)
{
    setenv("CK_TIMEOUT_MULTIPLIER", "10", 0); /* read as each test case is made */
    Suite *(*const suites[])(void) = {
        tree_suite,     hashtab_suite,  addrmap_suite,  slotmap_suite,  pool_suite,     strategy_suite, buddy_suite,
        caching_suite,  device_suite,   workload_suite, units_suite,
        jsonw_suite,
        config_suite,
        out_suite,
        childenv_suite,
        livemap_suite,
        reorder_suite,
        stacks_suite,
        stackids_suite,
        walk_suite,
        recorder_suite,
        ring_suite,
        recfmt_suite,
        clock_suite,
        replay_suite,
        lean_suite,
        reader_suite,
        procfs_suite,
        stats_suite,
        sites_suite,
        symbols_suite,
        escape_suite,
        ptree_suite,
        mappings_suite,
        groups_suite,
        downsample_suite,
        timeline_suite,
        layout_suite,
        untraced_suite,
        run_report_suite,
        seccomp_suite,
        report_suite,
        catalog_suite,
        smapsum_suite,
        sample_suite,
        findings_suite,
        opts_suite,
        touched_suite,
    };
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
