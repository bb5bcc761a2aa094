/*
 * The unit test runner: one Check suite per core module.
 * CK_RUN_SUITE=pool selects one suite, as Check's environment allows.
 */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/suites.h"

int main(void)
{
    Suite *(*const suites[])(void) = {
        tree_suite,     hashtab_suite,  addrmap_suite,  radixmap_suite, pool_suite,     strategy_suite, buddy_suite,
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
        sample_suite,
    };
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
