/* Program for the HTML, LCOV and DOT report tests. step() runs 2n times; its
 * hottest path goes through the HOT line (2n - 2n/7 times), a rarer one
 * through the COLD line; the NEVER line does not run with one argument. The
 * loop in main has a two-block body, so its path DAG has a real backedge. */
#include <stdio.h>
#include <stdlib.h>

long notes;

__attribute__((noinline)) void note(long x) { notes += x; }

__attribute__((noinline)) long step(long x) {
  if (x % 7 == 0) {
    note(x); /* COLD */
    return x / 7;
  }
  return x * 3 + 1; /* HOT */
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100;
  long s = 0;
  for (long i = 1; i <= n; i++) {
    s += step(i) + step(i + n);
    if (s % 5 == 0)
      note(s);
  }
  printf("%ld %ld\n", s, notes);
  if (argc > 2)
    puts("extra arguments ignored"); /* NEVER */
  return 0;
}
