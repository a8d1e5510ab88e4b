/* Waits for stdin to close, then work(argv[1]) and exit: many at once. */
#include "pathprof_test.h"
int main(int argc, char **argv) {
    char c;
    while (read(0, &c, 1) > 0) {}
    work(arg(argc, argv, 1, 10));
    return 0;
}
