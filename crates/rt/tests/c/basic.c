/* work(argv[1]); optionally __pathprof_dump() then work(argv[2]);
 * prints to stdout and exits with status 3. */
#include "pathprof_test.h"
int main(int argc, char **argv) {
    work(arg(argc, argv, 1, 10));
    long more = arg(argc, argv, 2, 0);
    if (more) {
        __pathprof_dump();
        work(more);
    }
    printf("hello from the program\n");
    return 3;
}
