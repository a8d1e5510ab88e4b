/* daemon.c: daemon() forks; its parent ends inside it (_exit(0)) and the child
 * returns from it and goes on, as a server that detaches does.
 *
 * main calls work(10) before daemon(1, 1) (the parent: @work 10 times) and
 * work(20) after it (the child: @work 20 times), so work is called twice and
 * its loop body runs 30 times; main is entered once (by the parent), daemon
 * returns once (in the child).
 * Output, all from the child (it keeps the parent's stdout):
 *   "before 45 after 190\n"; the parent's exit status is 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) long work(int n) {
  long s = 0;
  for (int k = 0; k < n; k++) {
    s += k; /* @work */
  }
  return s;
}

int main(void) {
  long before = work(10);
  if (daemon(1, 1) != 0) {
    perror("daemon");
    return 1;
  }
  long after = work(20); /* @child */
  printf("before %ld after %ld\n", before, after);
  return 0;
}
