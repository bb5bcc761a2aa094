/*
 * coro: the malloc family on a coroutine's small stack.
 *
 *   coro [STACK_BYTES]        default 8192, a multiple of the page size
 *
 * Runs a function on a stack of STACK_BYTES (makecontext/swapcontext;
 * mapped, with a guard page below it)
 * that allocates, reallocates and frees tagged blocks (size % 4096 ==
 * 777), switching back to main after each round; 10 rounds.  Prints
 * "coro: 10 rounds, 20 blocks".  A stack overflow is a SIGSEGV.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static ucontext_t main_ctx, coro_ctx;
static int rounds, blocks;

static void body(void)
{
    for (int r = 0; r < 10; r++) {
        char *p = malloc(777);
        if (!p)
            exit(1);
        p = realloc(p, 4096 + 777);
        if (!p)
            exit(1);
        memset(p, r, 4096 + 777);
        free(p);
        blocks += 2;
        rounds++;
        swapcontext(&coro_ctx, &main_ctx);
    }
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 8192;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size < page || size % page || size > (64u << 20))
        return 2;
    /* The stack comes from mmap, with a guard page below it, so that an
     * overflow faults instead of writing over something else. */
    char *base = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (base == MAP_FAILED || mprotect(base, page, PROT_NONE))
        return 1;
    if (getcontext(&coro_ctx))
        return 1;
    coro_ctx.uc_stack.ss_sp = base + page;
    coro_ctx.uc_stack.ss_size = size;
    coro_ctx.uc_link = &main_ctx;
    makecontext(&coro_ctx, body, 0);
    while (rounds < 10) {
        int before = rounds;
        if (swapcontext(&main_ctx, &coro_ctx))
            return 1;
        if (rounds == before)
            break;
    }
    printf("coro: %d rounds, %d blocks\n", rounds, blocks);
    return 0;
}
