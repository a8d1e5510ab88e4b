/* Runs a command and writes what the kernel says it used, for
 * bench/overhead.py:
 *
 *     rusage FD COMMAND [ARG...]
 *
 * forks, executes COMMAND (searched in PATH) with its arguments, waits for it
 * with wait4 and writes one line to file descriptor FD:
 *
 *     user_us system_us maxrss_kib wait_status
 *
 * (the child's user and system CPU time in microseconds, its peak resident
 * set in KiB, its wait status), then exits 0; 127 if COMMAND could not run.
 *
 * Why a process between the script and the program: at exec Linux keeps the
 * peak resident set of the address space being replaced (exec_mmap), so a
 * program Python starts reports at least Python's own peak (about 14 MB,
 * more than zlib's or bzip2's whole run). Forked from this small process, a
 * program's ru_maxrss is its own, within a few hundred KiB.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static long micros(struct timeval t) { return t.tv_sec * 1000000L + t.tv_usec; }

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s FD COMMAND [ARG...]\n", argv[0]);
        return 127;
    }
    int fd = atoi(argv[1]);
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage: fork");
        return 127;
    }
    if (pid == 0) {
        close(fd);
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("rusage: wait4");
            return 127;
        }
    }
    if (dprintf(fd, "%ld %ld %ld %d\n", micros(ru.ru_utime), micros(ru.ru_stime), ru.ru_maxrss, status) < 0) {
        perror("rusage: write");
        return 127;
    }
    return 0;
}
