/*
 * many_live: N small blocks (16 to 48 bytes) live at once, then all
 * freed.  Prints "blocks=N checksum=X".  Under a low `ulimit -v` the
 * recorder, which shares the limit, has no room to double its map of
 * live blocks (tests/integration/test_transparency.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    unsigned char **p = malloc(n * sizeof *p);
    if (!p)
        return 2;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        size_t size = 16 + (i * 7) % 33;
        if (!(p[i] = malloc(size)))
            return 3;
        memset(p[i], (int)(i & 0xff), size);
    }
    for (size_t i = 0; i < n; i++) {
        sum = sum * 31 + p[i][0];
        free(p[i]);
    }
    free(p);
    printf("blocks=%zu checksum=%llu\n", n, (unsigned long long)sum);
    return 0;
}
