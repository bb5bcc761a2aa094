/*
 * walk_shapes: allocations from the stack shapes that a walker by cached
 * frame rules and by the last stack (preload/walk.c) must get right, for
 * test_unwind.sh (under MEMSIM_UNWIND=check, which compares every stack
 * with libunwind's):
 *
 *   - recursion to varying depths, so each stack shares a part with the
 *     last one and differs above it;
 *   - a loop counter live across the malloc call, which the compiler
 *     may keep in %rbp (it changes at every call: the last stack's %rbp
 *     no longer matches, but is not needed);
 *   - variable-length arrays, whose frames take their CFA from %rbp and
 *     change size between calls at the same depth;
 *   - one wrapper called from two sites at the same depth (same frame
 *     position and pc, another caller above it);
 *   - malloc inside a signal handler (a signal frame: libunwind walks it);
 *   - threads, each with its own last stack;
 *   - a frame of 1 MiB, whose CFA offset does not fit a cached rule
 *     (its rule is worked out at every call instead).
 *
 * With "unloaded", a library (glibc's libutil.so.1) is loaded and
 * unloaded first: every stack the rules do not cover is then walked by
 * unw_step, not unw_backtrace (whose frame cache outlives an unload).
 * With "alone", no thread is made: the process has one thread when its
 * signal handler allocates, and memsim has not loaded libunwind (those
 * stacks end at the signal frame).  With "c11", the threads are C11's
 * (thrd_create), before which memsim loads libunwind as it does before
 * pthread_create.
 *
 * Prints a checksum of what it computed, the same with or without memsim.
 *   walk_shapes [ROUNDS [unloaded|alone|c11]]
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <threads.h>

static volatile uint64_t sum;
static volatile sig_atomic_t in_handler;

__attribute__((noinline)) static void *wrap(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, (int)(n & 0xff), n < 64 ? n : 64);
    return p;
}

__attribute__((noinline)) static void site_a(int i) { free(wrap((size_t)(16 + i % 200))); }
__attribute__((noinline)) static void site_b(int i) { free(wrap((size_t)(300 + i % 500))); }

/* A counter and several values live across the calls: register pressure
 * puts some in callee-saved registers, %rbp among them at -O2. */
__attribute__((noinline)) static uint64_t busy_loop(int n)
{
    uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, acc = 0;
    for (int i = 0; i < n; i++) {
        void *p = malloc((size_t)(8 + (a + i) % 300));
        acc += (p != NULL) + a * b + c * d + e * f;
        a += b; b ^= c; c += d; d ^= e; e += f; f ^= (uint64_t)i;
        free(p);
    }
    return acc + a + b + c + d + e + f;
}

/* A frame whose size depends on n: its CFA is taken from %rbp. */
__attribute__((noinline)) static uint64_t vla_frame(int n, int depth)
{
    volatile char buf[n + 1];
    buf[0] = (char)n;
    buf[n] = (char)depth;
    void *p = malloc((size_t)(32 + n));
    uint64_t r = (p != NULL) + (uint64_t)buf[0] + (uint64_t)buf[n];
    free(p);
    if (depth > 0)
        r += vla_frame((n * 7 + 3) % 97, depth - 1);
    return r + (uint64_t)buf[0]; /* read after the call: no loop made of it */
}

__attribute__((noinline)) static uint64_t recurse(int depth, int i)
{
    if (depth == 0) {
        if (i & 1)
            site_a(i);
        else
            site_b(i);
        return busy_loop(3) + vla_frame(i % 50, i % 4);
    }
    volatile int here = depth; /* read after the call: no loop made of it */
    uint64_t r = recurse(depth - 1, i);
    return r + (uint64_t)here;
}

/* A frame of 1 MiB: too large a CFA offset for the rule table. */
__attribute__((noinline)) static uint64_t big_frame(int i)
{
    volatile char buf[1 << 20];
    buf[0] = (char)i;
    buf[sizeof buf - 1] = (char)(i >> 3);
    void *p = malloc((size_t)(64 + i % 100));
    uint64_t r = (p != NULL) + (uint64_t)buf[0] + (uint64_t)buf[sizeof buf - 1];
    free(p);
    return r;
}

static void on_alarm(int sig)
{
    (void)sig;
    in_handler = 1;
    free(wrap(48)); /* not async-signal-safe in general; the main loop is
                       between calls when the timer fires, often enough */
    in_handler = 0;
}

static void *thread_main(void *arg)
{
    int rounds = *(int *)arg;
    uint64_t local = 0;
    for (int i = 0; i < rounds; i++)
        local += recurse(i % 23, i);
    return (void *)(uintptr_t)local;
}

static int c11_main(void *arg) { return (int)((uintptr_t)thread_main(arg) % 1000003); }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    if (argc > 2 && strcmp(argv[2], "unloaded") == 0) {
        void *h = dlopen("libutil.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "walk_shapes: %s\n", dlerror());
            return 1;
        }
        dlclose(h);
    }
    int threads = argc > 2 && strcmp(argv[2], "alone") == 0 ? 0 : 2;
    bool c11 = argc > 2 && strcmp(argv[2], "c11") == 0;
    pthread_t t[2];
    thrd_t c[2];
    for (int k = 0; k < threads; k++) {
        if (c11)
            thrd_create(&c[k], c11_main, &rounds);
        else
            pthread_create(&t[k], NULL, thread_main, &rounds);
    }
    uint64_t total = 0;
    for (int i = 0; i < rounds; i++)
        total += recurse((i * 7) % 31, i);
    for (int i = 0; i < 64; i++)
        total += big_frame(i);
    /* Signal frames: the handler mallocs; the main thread blocks in
     * sigsuspend meanwhile, so the handler never interrupts malloc. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old);
    for (int i = 0; i < 20; i++) {
        raise(SIGALRM);
        sigsuspend(&old);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    for (int k = 0; k < threads; k++) {
        void *r = NULL;
        int res = 0;
        if (c11)
            thrd_join(c[k], &res);
        else
            pthread_join(t[k], &r);
        total += c11 ? (uint64_t)res : (uint64_t)(uintptr_t)r;
    }
    printf("walk_shapes %d rounds: checksum %llu\n", rounds,
           (unsigned long long)(total % 1000003));
    return 0;
}
