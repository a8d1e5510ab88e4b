/* Counters at the top: they must stay at UINT64_MAX in the file. */
#include "pathprof_test.h"
int main(void) {
    slots0[0] = UINT64_MAX - 1;
    inc(&slots0[0]);
    inc(&slots0[0]);
    paths0[1] = UINT64_MAX;
    slots5[0] = UINT64_MAX - 5;
    return 0;
}
