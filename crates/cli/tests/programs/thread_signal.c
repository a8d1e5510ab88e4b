/* thread_signal.c: 8 threads count while SIGUSR1 dumps the profile, sent to
 * the process and to each thread in turn (40 signals, 2 ms apart, so the
 * last ones reach threads that have ended or come while threads end).
 * In the plain build SIGUSR1 has no handler (it would kill the process), so
 * no signal is sent there; the output is the same.
 *
 *   tick(i): thread t calls it 100,000 * (t + 1) times: 3,600,000 calls in
 *            all; its odd branch runs for odd i: 1,800,000 times.
 * Output: the sum of the threads' results; exit status 0. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8

static long results[THREADS];

__attribute__((noinline)) long tick(long i) {
  if (i & 1) {
    return i / 2; /* @odd */
  }
  return 1;
}

static void *worker(void *arg) {
  long t = (long)arg, s = 0;
  for (long i = 0; i < 100000 * (t + 1); i++)
    s += tick(i);
  results[t] = s;
  return NULL;
}

int main(void) {
  struct sigaction sa;
  sigaction(SIGUSR1, NULL, &sa);
  int dumps = sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
  pthread_t th[THREADS];
  for (long t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
      return 1;
  struct timespec pause = {0, 2000000};
  for (int k = 0; dumps && k < 40; k++) {
    if (k % 2 == 0)
      kill(getpid(), SIGUSR1);
    else
      pthread_kill(th[(k / 2) % THREADS], SIGUSR1);
    nanosleep(&pause, NULL);
  }
  long total = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    total += results[t];
  }
  printf("total %ld\n", total);
  return 0;
}
