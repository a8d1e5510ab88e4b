/* exit.c: exit() called from a nested function, in the middle of a loop of
 * main. The profile must still be written (by the runtime's atexit handler).
 *
 * main runs i = 0, 1, 2, ...: total += work(i); level1(i, total).
 *   work(i) sums k*k for k < i: work(0..6) = 0 0 1 5 14 30 55.
 *   level1(i, total) calls level2(total) when i > 5, which prints and calls
 *   exit(total % 100). At i = 6, total = 0+0+1+5+14+30+55 = 105: exit(5).
 * So work is called 7 times (i = 0..6) and returns each time; its loop body
 * (@work) runs 0+1+2+3+4+5+6 = 21 times. level1 is called 7 times and
 * reaches @l1tail 6 times; level2 is called once. main, level1 and level2 never
 * return from their last activation: only block counters (which count a block
 * when it starts) see those activations completely.
 * Output: "exiting with total 105\n", exit status 5.
 */
#include <stdio.h>
#include <stdlib.h>

volatile int limit = 10;
volatile long sink;

__attribute__((noinline)) long work(int n) {
  long s = 0;
  for (int k = 0; k < n; k++) {
    s += (long)k * k; /* @work */
  }
  return s;
}

__attribute__((noinline)) void level2(long total) {
  printf("exiting with total %ld\n", total); /* @l2 */
  exit((int)(total % 100));
}

__attribute__((noinline)) void level1(int i, long total) {
  if (i > 5)
    level2(total); /* @l1call */
  sink = i; /* @l1tail */
}

int main(void) {
  long total = 0;
  for (int i = 0; i < limit; i++) {
    total += work(i); /* @mainbody */
    level1(i, total);
  }
  printf("not reached\n");
  return 0;
}
