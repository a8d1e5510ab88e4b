/* forkloop.c: a parent forks four children in a loop; each child runs a
 * function and calls exit; the parent waits for all of them. The path in
 * progress at each fork() is counted once, by the parent; each process counts
 * what it runs after the fork.
 *
 *   child_work(n) for n = 10, 20, 30, 40: 4 calls, 100 iterations of @child_loop
 *   in all; main: 1 call; fork() returns 8 times (4 in the parent, 4 in
 *   children); @child runs 4 times (children), @parent 4 times.
 *   Output (children's lines in any order, so they print nothing):
 *   "sum 1110\n", exit status 0 (the children exit with n/10).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int base = 10;

__attribute__((noinline)) long child_work(int n) {
  long s = 0;
  for (int i = 0; i < n; i++)
    s += i; /* @child_loop */
  return s;
}

int main(void) {
  for (int k = 1; k <= 4; k++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      long s = child_work(base * k); /* @child */
      exit((int)(s % 7) + k);
    }
    if (pid < 0) /* @parent */
      return 99;
  }
  int status, sum = 0;
  while (wait(&status) > 0)
    sum += WEXITSTATUS(status);
  /* exit statuses: s % 7 + k for s = 45, 190, 435, 780: 3+1, 1+2, 1+3, 3+4 = 18 */
  printf("sum %d\n", sum * 61 + 12);
  return 0;
}
