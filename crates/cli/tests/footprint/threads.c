/* 256 threads alive at once, each counting a few paths of `classify`
 * (2^14 paths: a 128 KiB path array, of which a thread touches at most 4
 * pages) and waiting at a barrier until every thread has counted. Prints
 * the sum of the work to stdout (the same in every build) and the
 * process's peak resident memory (VmHWM) to stderr as `peak_kib N`. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define THREADS 256

static pthread_barrier_t counted;

static int classify(unsigned x) {
    int s = 0;
    if (x & 1) s += 1; else s -= 3;
    if (x & 2) s += 2; else s -= 5;
    if (x & 4) s += 3; else s -= 7;
    if (x & 8) s += 4; else s -= 11;
    if (x & 16) s += 5; else s -= 13;
    if (x & 32) s += 6; else s -= 17;
    if (x & 64) s += 7; else s -= 19;
    if (x & 128) s += 8; else s -= 23;
    if (x & 256) s += 9; else s -= 29;
    if (x & 512) s += 10; else s -= 31;
    if (x & 1024) s += 11; else s -= 37;
    if (x & 2048) s += 12; else s -= 41;
    if (x & 4096) s += 13; else s -= 43;
    if (x & 8192) s += 14; else s -= 47;
    return s;
}

static void *work(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    intptr_t sum = 0;
    for (unsigned i = 0; i < 4; i++) sum += classify(seed * 4 + i);
    pthread_barrier_wait(&counted);
    return (void *)sum;
}

static long peak_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) sscanf(line + 6, "%ld", &kib);
    if (f) fclose(f);
    return kib;
}

int main(void) {
    pthread_t t[THREADS];
    pthread_barrier_init(&counted, NULL, THREADS + 1);
    for (uintptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, work, (void *)i) != 0) return 1;
    pthread_barrier_wait(&counted);
    long sum = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (intptr_t)r;
    }
    printf("%ld\n", sum);
    fprintf(stderr, "peak_kib %ld\n", peak_kib());
    return 0;
}
