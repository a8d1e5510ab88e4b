/* thread_storm.c: twelve threads (more than the cores) run the same small
 * functions, a switch and a loop at the same time, on the same counters.
 * Built without --atomic, every count must be exact.
 *
 * Each thread runs ROUNDS rounds (all threads start together at a barrier):
 *   classify(i): called 12 * ROUNDS = 2,400,000 times; i % 5 takes each value
 *                ROUNDS / 5 times per thread: each case 480,000 times.
 *   inner(i % 4): called 2,400,000 times; its loop body runs
 *                 (0 + 1 + 2 + 3) * ROUNDS / 4 = 300,000 times per thread,
 *                 3,600,000 in all.
 *   worker: 12 calls.
 * Output: the sum of the threads' results; exit status 0. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 12
#define ROUNDS 200000

static pthread_barrier_t start;
static long results[THREADS];

__attribute__((noinline)) long classify(long v) {
  switch (v % 5) {
  case 0:
    return 1; /* @c0 */
  case 1:
    return v; /* @c1 */
  case 2:
    return -v; /* @c2 */
  case 3:
    return v * 2; /* @c3 */
  default:
    return 7; /* @c4 */
  }
}

__attribute__((noinline)) long inner(long n) {
  long s = 0;
  for (long j = 0; j < n; j++) {
    s += j + 1; /* @inner */
  }
  return s;
}

static void *worker(void *arg) {
  long t = (long)arg, s = 0;
  pthread_barrier_wait(&start);
  for (long i = 0; i < ROUNDS; i++) {
    s += classify(i);
    s += inner(i % 4);
  }
  results[t] = s;
  return NULL;
}

int main(void) {
  pthread_t th[THREADS];
  pthread_barrier_init(&start, NULL, THREADS);
  for (long t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
      return 1;
  long total = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    total += results[t];
  }
  printf("total %ld\n", total);
  return 0;
}
