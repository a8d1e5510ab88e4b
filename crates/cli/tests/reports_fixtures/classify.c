/* Golden program for `pathprof predict` and `pathprof diff`: classify() has
 * exactly four acyclic paths, one per category; each arm calls its own
 * function, so the optimiser can neither merge nor if-convert the arms. */
#include <stdio.h>
#include <stdlib.h>

long counts[4];

__attribute__((noinline)) void count_negative(void) { counts[0]++; }
__attribute__((noinline)) void count_zero(void) { counts[1]++; }
__attribute__((noinline)) void count_small(void) { counts[2]++; }
__attribute__((noinline)) void count_big(void) { counts[3]++; }

__attribute__((noinline)) void classify(int x) {
  if (x < 0)
    count_negative();
  else if (x == 0)
    count_zero();
  else if (x < 100)
    count_small();
  else
    count_big();
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    classify(atoi(argv[i]));
  printf("%ld %ld %ld %ld\n", counts[0], counts[1], counts[2], counts[3]);
  return 0;
}
