/*
 * expect: assertions for loops that check millions of times.  Check's
 * ck_assert_* report every passing check to the runner (a write per
 * assert in fork mode), which dominates such loops; these call into
 * Check only when they fail.
 */
#ifndef MEMSIM_TESTS_UNIT_EXPECT_H
#define MEMSIM_TESTS_UNIT_EXPECT_H

#include <check.h>
#include <stdint.h>

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond))                                                           \
            ck_abort_msg(__VA_ARGS__);                                         \
    } while (0)
#define EXPECT_PTR_EQ(x, y)                                                    \
    do {                                                                       \
        const void *x_ = (x), *y_ = (y);                                       \
        EXPECT(x_ == y_, "%s == %s: %p != %p", #x, #y, x_, y_);                \
    } while (0)
#define EXPECT_NULL(x) EXPECT_PTR_EQ(x, NULL)
#define EXPECT_NONNULL(x)                                                      \
    do {                                                                       \
        const void *x_ = (x);                                                  \
        EXPECT(x_ != NULL, "%s is NULL", #x);                                  \
    } while (0)
#define EXPECT_UINT(x, op, y)                                                  \
    do {                                                                       \
        uintmax_t x_ = (x), y_ = (y);                                          \
        EXPECT(x_ op y_, "%s %s %s: %ju vs %ju", #x, #op, #y, x_, y_);         \
    } while (0)
#define EXPECT_INT(x, op, y)                                                   \
    do {                                                                       \
        intmax_t x_ = (x), y_ = (y);                                           \
        EXPECT(x_ op y_, "%s %s %s: %jd vs %jd", #x, #op, #y, x_, y_);         \
    } while (0)

#endif
