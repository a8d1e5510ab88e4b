/* work(argv[2]), then end the way argv[1] says (docs in tests/c_programs.rs,
 * `ends_*` tests). The exec modes run this program again as `ends exit 7`
 * (argv[3] is its path; the p variants search PATH for "ends"). */
#define _GNU_SOURCE
#include "pathprof_test.h"
#include <assert.h>
#include <fcntl.h>

extern char **environ;

static void at_exit_then_quick(void) {
    work(5);
    _exit(6);
}

static volatile sig_atomic_t got_term;
static void on_term(int sig) {
    (void)sig;
    got_term = 1;
}

static void *thread_main(void *p) {
    return p;
}

#define IS(s) (strcmp(how, s) == 0)

int main(int argc, char **argv) {
    if (argc < 3) return 100;
    const char *how = argv[1];
    work(arg(argc, argv, 2, 10));
    const char *self = argc > 3 ? argv[3] : "/proc/self/exe";
    char *again[] = {"ends", "exit", "7", 0};
    if (IS("exit")) exit(4);
    if (IS("return")) return 4;
    if (IS("_exit")) _exit(4);
    if (IS("_Exit")) _Exit(4);
    if (IS("abort")) abort();
    if (IS("assert")) assert(argc == 0);
    if (IS("raise")) {
        raise(atoi(argv[4]));
        return 99;
    }
    if (IS("segv")) {
        *(volatile int *)(uintptr_t)argc = 1; /* a write to a low address: SIGSEGV */
        return 99;
    }
    if (IS("fpe")) {
        volatile int zero = argc - 4; /* ends fpe N EXE */
        return argc / zero; /* integer division by zero */
    }
    if (IS("wait")) {
        printf("ready\n");
        fflush(stdout);
        for (;;) pause();
    }
    if (IS("execv")) execv(self, again);
    if (IS("execve")) execve(self, again, environ);
    if (IS("execvp")) execvp("ends", again);
    if (IS("execvpe")) execvpe("ends", again, environ);
    if (IS("execl")) execl(self, "ends", "exit", "7", (char *)0);
    if (IS("execle")) execle(self, "ends", "exit", "7", (char *)0, environ);
    if (IS("execlp")) execlp("ends", "ends", "exit", "7", (char *)0);
    if (IS("fexecve")) {
        int fd = open(self, O_RDONLY | O_CLOEXEC);
        fexecve(fd, again, environ);
    }
    if (IS("execv") || IS("execve") || IS("execvp") || IS("execvpe") || IS("execl") ||
        IS("execle") || IS("execlp") || IS("fexecve"))
        return 98; /* the exec failed */
    if (IS("exec_fail")) {
        /* Both fail; the process goes on, then exits. */
        execv("/nonexistent/pathprof", again);
        execl("/nonexistent/pathprof", "x", (char *)0);
        work(7);
        exit(4);
    }
    if (IS("fork_exit") || IS("fork_exec") || IS("vfork_exec")) {
        pid_t pid = IS("vfork_exec") ? vfork() : fork();
        if (pid < 0) return 97;
        if (pid == 0) {
            if (IS("fork_exit")) {
                work(3);
                _exit(0);
            }
            execv(self, again);
            _exit(96);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status)) return 95;
        return WEXITSTATUS(status) == (IS("fork_exit") ? 0 : 4) ? 4 : 94;
    }
    if (IS("atexit_exit")) {
        atexit(at_exit_then_quick);
        exit(0);
    }
    if (IS("dump_then_term")) {
        __pathprof_dump();
        work(2);
        raise(SIGTERM);
        return 93;
    }
    if (IS("own_term")) {
        signal(SIGTERM, on_term);
        raise(SIGTERM);
        return got_term ? 4 : 92;
    }
    if (IS("threads")) {
        pthread_t t[3];
        for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, thread_main, 0);
        for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
        return 4;
    }
    return 100;
}
