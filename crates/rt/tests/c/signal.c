/* work(A); say "ready"; block in read(0) (the test sends SIGUSR1 meanwhile);
 * after one byte arrives: work(B); raise(SIGUSR1) ourselves; work(C); exit. */
#include "pathprof_test.h"
int main(int argc, char **argv) {
    work(arg(argc, argv, 1, 10));
    printf("ready\n");
    fflush(stdout);
    char c;
    ssize_t n = read(0, &c, 1);
    if (n != 1) {
        printf("read returned %ld\n", (long)n);
        return 1;
    }
    work(arg(argc, argv, 2, 10));
    raise(SIGUSR1);
    work(arg(argc, argv, 3, 10));
    printf("done\n");
    return 0;
}
