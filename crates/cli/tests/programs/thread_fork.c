/* thread_fork.c: a thread that is not the main thread forks while four
 * other threads count; the child does its own work and exits from that
 * thread. The parent writes what every thread counted, the child only what
 * it counted after the fork.
 *
 *   spin(i):  4 spinners call it 200,000 times each: 800,000 calls.
 *   child_work(i): only the child calls it, 1,000 times.
 *   forker:   1 call (the child ends inside it, by exit).
 * Output (parent only): the child's exit status and the spinners' sum;
 * exit status 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPINNERS 4

static long results[SPINNERS];
static int child_status = -1;
static pthread_barrier_t start;

__attribute__((noinline)) long spin(long i) { return (i * 7) % 13; }

__attribute__((noinline)) long child_work(long i) { return i ^ 3; }

static void *spinner(void *arg) {
  long t = (long)arg, s = 0;
  pthread_barrier_wait(&start);
  for (long i = 0; i < 200000; i++)
    s += spin(i + t);
  results[t] = s;
  return NULL;
}

static void *forker(void *arg) {
  (void)arg;
  pthread_barrier_wait(&start);
  pid_t pid = fork();
  if (pid == 0) {
    long s = 0;
    for (long i = 0; i < 1000; i++)
      s += child_work(i);
    exit(s == 499500 ? 7 : 1); /* @child */
  }
  int status;
  waitpid(pid, &status, 0);
  child_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return NULL;
}

int main(void) {
  pthread_t th[SPINNERS + 1];
  pthread_barrier_init(&start, NULL, SPINNERS + 1);
  for (long t = 0; t < SPINNERS; t++)
    if (pthread_create(&th[t], NULL, spinner, (void *)t) != 0)
      return 1;
  if (pthread_create(&th[SPINNERS], NULL, forker, NULL) != 0)
    return 1;
  long total = 0;
  for (int t = 0; t <= SPINNERS; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < SPINNERS; t++)
    total += results[t];
  printf("child %d spin %ld\n", child_status, total);
  return 0;
}
