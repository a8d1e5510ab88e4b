/* A module whose counters are all in its array: function 0 has 2 slots
 * and a path array of 8192 ids (more than the runtime reads whole, so it
 * reads it page by page). main counts slot 0 and path 7000 (an early-exit
 * count around a call) and forks; both processes then "return from the
 * call" and undo the path count. The child's marks say the path was
 * counted once (its parent's, at the fork), so its undo is a resume,
 * though its counters then hold nothing on that page. */
#define MANUAL_REGISTER
#include "pathprof_test.h"

#define SLOTS 2
#define PATHS 8192
#define N (SLOTS + PATHS)
static uint64_t array[N];
static struct PpFunction tfns[] = {
    {0x4444, 0, SLOTS, array, 1, 0, PATHS, array + SLOTS},
};
static struct PpModule tmod = {PP_ABI, 2, BUILD, 1, tfns, 0, array, N, 0};

int main(void) {
    (void)&module; /* the header's module: not this test's */
    __pathprof_register(&tmod);
    inc(&array[0]);
    inc(&array[SLOTS + 7000]);
    fflush(stdout);
    pid_t pid = fork();
    dec(&array[SLOTS + 7000]);
    if (pid == 0) return 0;
    int status = -1;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 9;
}
