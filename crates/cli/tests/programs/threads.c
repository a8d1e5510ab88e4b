/* threads.c: four threads doing known work at the same time on the same
 * counters. Built with `--atomic`, every count is exact.
 *
 * Thread t (t = 0..3) runs worker(t, 50000 * (t + 1)), whose loop body
 * (@tbody) runs 50000 * (t + 1) times: 50000 * (1 + 2 + 3 + 4) = 500000 times
 * in all; worker is called 4 times, thread_main 4 times.
 * worker(t, n) = sum_{i<n} ((i ^ t) & 7); each group of 8 consecutive i
 * contributes 0+1+...+7 = 28 whatever t is, so worker(t, n) = 28 * n / 8:
 * 175000 350000 525000 700000.
 * Output: one line per thread with its result; exit status 0.
 */
#include <pthread.h>
#include <stdio.h>

volatile long per_thread = 50000;
long results[4];

__attribute__((noinline)) long worker(long t, long n) {
  long s = 0;
  for (long i = 0; i < n; i++) {
    s += (i ^ t) & 7; /* @tbody */
  }
  return s;
}

static void *thread_main(void *arg) {
  long t = (long)arg;
  results[t] = worker(t, per_thread * (t + 1));
  return NULL;
}

int main(void) {
  pthread_t th[4];
  for (long t = 0; t < 4; t++)
    if (pthread_create(&th[t], NULL, thread_main, (void *)t) != 0)
      return 1;
  for (int t = 0; t < 4; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < 4; t++)
    printf("thread %d: %ld\n", t, results[t]);
  return 0;
}
