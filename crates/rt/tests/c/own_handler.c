/* The program installs its own SIGUSR1 handler before registering: the
 * runtime must leave it alone. */
#define MANUAL_REGISTER
#include "pathprof_test.h"
static volatile sig_atomic_t got;
static void handler(int s) { (void)s; got++; }
int main(void) {
    signal(SIGUSR1, handler);
    __pathprof_register(&module);
    work(7);
    raise(SIGUSR1);
    printf("handler ran %d times\n", (int)got);
    return 0;
}
