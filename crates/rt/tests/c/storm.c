/* Says "ready", then counts in a hot loop while the test sends SIGUSR1 over
 * and over: every dump interrupts some increment; the total must be exact. */
#include "pathprof_test.h"
int main(int argc, char **argv) {
    printf("ready\n");
    fflush(stdout);
    work(arg(argc, argv, 1, 1000000));
    return 0;
}
