/* reorder: a realloc that moved is taken where its new block was had. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "ipc/msg.h"
#include "recorder/reorder.h"
#include "tests/unit/helpers.h"
#include "tests/unit/suites.h"

/* What was taken, in order: "kind:tid:a:b" strings joined by spaces. */
static char log_buf[4096];
static reorder_t ro;

static void take(void *ctx, const ring_slot_t *m)
{
    (void)ctx;
    char one[64];
    static const char *names[MSG_KINDS] = {[MSG_ALLOC] = "a", [MSG_FREE] = "f",
                                           [MSG_REALLOC] = "r", [MSG_PHASE] = "phase",
                                           [MSG_STACK] = "stack"};
    snprintf(one, sizeof one, "%s%s%d:%llx:%llx", log_buf[0] ? " " : "",
             names[m->kind] ? names[m->kind] : "?", m->tid, (unsigned long long)m->a,
             (unsigned long long)m->b);
    strncat(log_buf, one, sizeof log_buf - strlen(log_buf) - 1);
}

static void setup(void)
{
    log_buf[0] = '\0';
    reorder_init(&ro, take, NULL);
}

static void in(msg_kind_t kind, int tid, uint64_t a, uint64_t b)
{
    ring_slot_t m = {.kind = kind, .tid = tid, .a = a, .b = b, .c = b ? 32 : 0};
    if (kind == MSG_FREE || kind == MSG_ALLOC)
        m.c = 0;
    reorder_input(&ro, &m);
}

START_TEST(unmoved_messages_pass_in_order)
{
    in(MSG_ALLOC, 1, 0x10, 32);
    in(MSG_REALLOC, 1, 0x10, 0x10); /* in place */
    in(MSG_FREE, 1, 0x10, 0);
    ck_assert_str_eq(log_buf, "a1:10:20 r1:10:10 f1:10:0");
    ck_assert_uint_eq(ro.n, 0);
}
END_TEST

/* A moved realloc posted after its call in a one-thread process
 * (MSG_REALLOC_IN_ORDER) is taken at once: no done follows it. */
START_TEST(a_realloc_in_order_does_not_wait)
{
    ring_slot_t m = {.kind = MSG_REALLOC, .tid = 1, .a = 0x10, .b = 0x40, .c = 64,
                     .e = MSG_REALLOC_IN_ORDER};
    reorder_input(&ro, &m);
    ck_assert_str_eq(log_buf, "r1:10:40");
    ck_assert_uint_eq(ro.n, 0);
    in(MSG_ALLOC, 2, 0x10, 32);
    ck_assert_str_eq(log_buf, "r1:10:40 a2:10:20");
    ck_assert_uint_eq(ro.early, 0);
}
END_TEST

/* The race: thread 2 claims realloc(0x10) first; thread 3 frees 0x20,
 * which thread 2's realloc then returns. */
START_TEST(a_moved_realloc_waits_for_its_done)
{
    in(MSG_REALLOC, 2, 0x10, 0x20);
    in(MSG_FREE, 3, 0x20, 0);
    in(MSG_ALLOC, 3, 0x30, 16); /* unrelated: passes */
    ck_assert_str_eq(log_buf, "f3:20:0 a3:30:10");
    in(MSG_REALLOC_DONE, 2, 0x10, 0x20);
    ck_assert_str_eq(log_buf, "f3:20:0 a3:30:10 r2:10:20");
    ck_assert_uint_eq(ro.n, 0);
    ck_assert_uint_eq(ro.early, 0);
}
END_TEST

/* Its old block, given back inside the call, is another thread's before
 * the done came: the realloc goes first. */
START_TEST(its_old_address_named_takes_it_early)
{
    in(MSG_REALLOC, 2, 0x10, 0x20);
    in(MSG_ALLOC, 4, 0x10, 48);
    ck_assert_str_eq(log_buf, "r2:10:20 a4:10:30");
    in(MSG_REALLOC_DONE, 2, 0x10, 0x20); /* nothing left to take */
    ck_assert_str_eq(log_buf, "r2:10:20 a4:10:30");
    ck_assert_uint_eq(ro.early, 1);
}
END_TEST

/* Two waiting: the one moving onto the other's old address goes second. */
START_TEST(a_realloc_onto_a_waiting_ones_old_address_goes_after_it)
{
    in(MSG_REALLOC, 3, 0x50, 0x60); /* gives back 0x50 */
    in(MSG_REALLOC, 2, 0x10, 0x50); /* gets 0x50 */
    in(MSG_REALLOC_DONE, 2, 0x10, 0x50);
    ck_assert_str_eq(log_buf, "r3:50:60 r2:10:50");
    in(MSG_REALLOC_DONE, 3, 0x50, 0x60);
    ck_assert_str_eq(log_buf, "r3:50:60 r2:10:50");
    ck_assert_uint_eq(ro.n, 0);
}
END_TEST

/* A realloc moving onto a waiting one's old address is no sign that the
 * waiting one has its new block yet: its slot was claimed before. */
START_TEST(a_realloc_onto_its_old_address_does_not_take_it_early)
{
    in(MSG_REALLOC, 3, 0x50, 0x60);
    in(MSG_REALLOC, 2, 0x10, 0x50);
    in(MSG_FREE, 4, 0x60, 0); /* 0x60's owner before thread 3's realloc had it */
    ck_assert_str_eq(log_buf, "f4:60:0");
    in(MSG_REALLOC_DONE, 3, 0x50, 0x60);
    in(MSG_REALLOC_DONE, 2, 0x10, 0x50);
    ck_assert_str_eq(log_buf, "f4:60:0 r3:50:60 r2:10:50");
    ck_assert_uint_eq(ro.early, 0);
}
END_TEST

START_TEST(a_turn_of_the_process_takes_every_waiting_one_first)
{
    in(MSG_REALLOC, 2, 0x10, 0x20);
    in(MSG_STACK, 2, 7, 0); /* a stack passes */
    in(MSG_REALLOC, 3, 0x30, 0x40);
    in(MSG_PHASE, 1, 1, 0);
    ck_assert_str_eq(log_buf, "stack2:7:0 r2:10:20 r3:30:40 phase1:1:0");
    in(MSG_REALLOC, 2, 0x20, 0x70);
    reorder_flush(&ro);
    ck_assert_str_eq(log_buf, "stack2:7:0 r2:10:20 r3:30:40 phase1:1:0 r2:20:70");
}
END_TEST

START_TEST(a_message_of_its_thread_takes_it_first)
{
    in(MSG_REALLOC, 2, 0x10, 0x20);
    in(MSG_FREE, 2, 0x20, 0); /* its done was lost */
    ck_assert_str_eq(log_buf, "r2:10:20 f2:20:0");
    ck_assert_uint_eq(ro.n, 0);
}
END_TEST

/* Where each message was taken: a free's position by its address, a
 * realloc's by its new one (crowd_take). */
#define CROWD 3000
static unsigned crowd_n, freed_at[CROWD], moved_at[CROWD];

static void crowd_take(void *ctx, const ring_slot_t *m)
{
    (void)ctx;
    unsigned k = (unsigned)((m->kind == MSG_FREE ? m->a : m->b) - 0x100000) / 16;
    ck_assert_uint_lt(k, CROWD);
    (m->kind == MSG_FREE ? freed_at : moved_at)[k] = ++crowd_n;
}

/* More threads inside realloc at once than any fixed room: 600 reallocs
 * wait, each for its done, while another thread frees the block each
 * will get.  Every free goes before the realloc that gets its block
 * (hundreds_of_threads once found "realloc to X, which is still live"
 * when the 257th waiting one pushed out the oldest). */
START_TEST(as_many_wait_as_there_are_threads_inside_realloc)
{
    reorder_init(&ro, crowd_take, NULL);
    crowd_n = 0;
    for (unsigned i = 0; i < CROWD; i++)
        in(MSG_REALLOC, (int)i + 1, 0x1000 + i * 16, 0x100000 + i * 16);
    for (unsigned i = 0; i < CROWD; i++)
        in(MSG_FREE, 9999, 0x100000 + i * 16, 0);
    ck_assert_uint_eq(ro.n, CROWD);
    for (unsigned i = 0; i < CROWD; i++)
        in(MSG_REALLOC_DONE, (int)i + 1, 0x1000 + i * 16, 0x100000 + i * 16);
    ck_assert_uint_eq(ro.n, 0);
    ck_assert_uint_eq(ro.early, 0);
    for (unsigned i = 0; i < CROWD; i++) {
        ck_assert_uint_ne(moved_at[i], 0);
        ck_assert_uint_lt(freed_at[i], moved_at[i]);
    }
    reorder_free(&ro);
}
END_TEST

/* A chain: each waiting realloc moves onto the old address of the one
 * before it, which therefore goes first.  The last one's done takes the
 * first first, then each in turn (once by recursion, as deep as the
 * chain). */
START_TEST(a_chain_of_waiting_reallocs_goes_in_its_order)
{
    enum { CHAIN = 3000 };
    reorder_init(&ro, crowd_take, NULL);
    crowd_n = 0;
    /* realloc k: from 0x100000 + (k + 1) * 16 to 0x100000 + k * 16 */
    for (unsigned k = 0; k < CHAIN; k++)
        in(MSG_REALLOC, (int)k + 1, 0x100000 + (k + 1) * 16, 0x100000 + k * 16);
    ck_assert_uint_eq(crowd_n, 0);
    in(MSG_REALLOC_DONE, CHAIN, 0x100000 + CHAIN * 16, 0x100000 + (CHAIN - 1) * 16);
    ck_assert_uint_eq(ro.n, 0);
    ck_assert_uint_eq(ro.early, CHAIN - 1);
    for (unsigned k = 0; k < CHAIN; k++)
        ck_assert_uint_eq(moved_at[k], k + 1);
    reorder_free(&ro);
}
END_TEST

Suite *reorder_suite(void)
{
    Suite *s = suite_create("reorder");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, unmoved_messages_pass_in_order);
    tcase_add_test(tc, a_moved_realloc_waits_for_its_done);
    tcase_add_test(tc, a_realloc_in_order_does_not_wait);
    tcase_add_test(tc, its_old_address_named_takes_it_early);
    tcase_add_test(tc, a_realloc_onto_a_waiting_ones_old_address_goes_after_it);
    tcase_add_test(tc, a_realloc_onto_its_old_address_does_not_take_it_early);
    tcase_add_test(tc, a_turn_of_the_process_takes_every_waiting_one_first);
    tcase_add_test(tc, a_message_of_its_thread_takes_it_first);
    tcase_add_test(tc, as_many_wait_as_there_are_threads_inside_realloc);
    tcase_add_test(tc, a_chain_of_waiting_reallocs_goes_in_its_order);
    suite_add_tcase(s, tc);
    return s;
}
