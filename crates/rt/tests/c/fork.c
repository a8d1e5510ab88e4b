/* work(A); fork: the child does work(B) and exits; the parent waits, then work(C). */
#include "pathprof_test.h"
int main(int argc, char **argv) {
    work(arg(argc, argv, 1, 10));
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        work(arg(argc, argv, 2, 10));
        exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    work(arg(argc, argv, 3, 10));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
