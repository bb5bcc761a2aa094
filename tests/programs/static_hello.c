/* static_hello: a statically linked program (built with -static), which
 * LD_PRELOAD cannot reach: memsim run must say why it left no trace. */
#include <stdio.h>

int main(void)
{
    puts("static hello");
    return 0;
}
