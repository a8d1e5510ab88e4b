/* Counts forever, saying each finished step on stdout: one byte per call of
 * step() that returned. Run as `killed THREADS FORK`: THREADS more threads
 * count beside the main one, and with FORK=1 a fork child counts too. The
 * test kills the whole process group with SIGKILL at a random moment; every
 * byte read is a step the profile must hold, and each counting thread may
 * hold one more (the step in progress at the kill). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned sink;

__attribute__((noinline)) static void tick(unsigned k) { sink += k; }

/* 2^10 acyclic paths, the low ten bits of i choosing one: the first 1024
 * steps each take a new path, so a hash table counting them grows while
 * the program runs (built with a small --array-limit). */
#define BIT(k)                                                                 \
    if (i & (1u << k))                                                         \
        tick(k);
__attribute__((noinline)) static void step(unsigned i) {
    BIT(0) BIT(1) BIT(2) BIT(3) BIT(4) BIT(5) BIT(6) BIT(7) BIT(8) BIT(9)
}

static void *count(void *arg) {
    (void)arg;
    for (unsigned i = 0;; i++) {
        step(i);
        if (write(1, "x", 1) != 1)
            _exit(1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    int fork_child = argc > 2 && atoi(argv[2]);
    if (fork_child && fork() < 0)
        return 1;
    for (int t = 0; t < threads; t++) {
        pthread_t tid;
        if (pthread_create(&tid, NULL, count, NULL) != 0)
            return 1;
    }
    count(NULL);
    return 0;
}
