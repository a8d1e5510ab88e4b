/* 4 threads count hash paths (i * 7 + t) % 5000 for i < argv[1], with the atomic entry point (as programs built with --atomic do). */
#include "pathprof_test.h"
static long iterations;
static void *run(void *p) {
    uint64_t t = (uint64_t)(uintptr_t)p;
    for (long i = 0; i < iterations; i++)
        __pathprof_hash_count_atomic(hs5.words, ((uint64_t)i * 7 + t) % 5000);
    return 0;
}
int main(int argc, char **argv) {
    iterations = arg(argc, argv, 1, 100000);
    pthread_t th[4];
    for (uintptr_t t = 0; t < 4; t++) pthread_create(&th[t], 0, run, (void *)t);
    for (int t = 0; t < 4; t++) pthread_join(th[t], 0);
    return 0;
}
