/* thread_pool.c: a pool of 8 workers that live until the process exits
 * (blocked on a condition variable when main calls exit), and 4 threads that
 * end early with pthread_exit from inside a nested call.
 *
 *   task(i): 4,000 tasks, each run once by some worker; its loop body runs
 *            i % 3 times: 1,333 * (0 + 1 + 2) + (0 + 1) for i = 3,999 ... =
 *            3,999 in all (i % 3 over 0..3999 sums to 1333 * 3 + 0 = 3,999).
 *   bump(): each early thread calls it 1,000 times, then leave() ends the
 *           thread: 4,000 calls; leave 4 calls; the line after it never runs.
 * Output: the tasks' sum and the early threads' sum; exit status 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 8
#define TASKS 4000
#define EARLY 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static long next_task, done, task_sum;
static long early_sums[EARLY];
static pthread_barrier_t started;

__attribute__((noinline)) long task(long i) {
  long s = 0;
  for (long k = 0; k < i % 3; k++) {
    s += k + i; /* @task */
  }
  return s;
}

static void *pool_worker(void *arg) {
  (void)arg;
  pthread_barrier_wait(&started);
  pthread_mutex_lock(&lock);
  for (;;) {
    while (next_task == TASKS)
      pthread_cond_wait(&more, &lock);
    long i = next_task++;
    pthread_mutex_unlock(&lock);
    long s = task(i);
    pthread_mutex_lock(&lock);
    task_sum += s;
    if (++done == TASKS)
      pthread_cond_signal(&finished);
  }
  return NULL;
}

__attribute__((noinline)) long bump(long x) { return x * 3 + 1; }

__attribute__((noinline)) void leave(long t, long s) {
  early_sums[t] = s;
  pthread_exit(NULL);
}

static void *early_main(void *arg) {
  long t = (long)arg, s = 0;
  for (long i = 0; i < 1000; i++)
    s += bump(i + t);
  leave(t, s);
  early_sums[t] = -1; /* never runs */
  return NULL;
}

int main(void) {
  pthread_t th;
  for (long e = 0; e < EARLY; e++) {
    pthread_t early;
    if (pthread_create(&early, NULL, early_main, (void *)e) != 0)
      return 1;
    pthread_join(early, NULL);
  }
  pthread_barrier_init(&started, NULL, WORKERS + 1);
  for (int w = 0; w < WORKERS; w++)
    if (pthread_create(&th, NULL, pool_worker, NULL) != 0)
      return 1;
  pthread_barrier_wait(&started);
  pthread_mutex_lock(&lock);
  while (done < TASKS)
    pthread_cond_wait(&finished, &lock);
  long sum = task_sum;
  pthread_mutex_unlock(&lock);
  long early = 0;
  for (int e = 0; e < EARLY; e++)
    early += early_sums[e];
  printf("tasks %ld early %ld\n", sum, early);
  exit(0); /* the workers are still there */
}
