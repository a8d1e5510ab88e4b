/* Path-guided duplication: `step`'s second branch goes the way its first
 * went (both test i % 4 != 0, the second through a table filled at run time,
 * which no compiler can see through). For `correlated 100`: 75 paths take
 * both branches' first ways, 25 both second ways; the edge profile says
 * 75:25 at each (see tests/cli/pgo.rs). */
#include <stdio.h>
#include <stdlib.h>

static char busy[1 << 16];
static long work[4];

static __attribute__((noinline)) void note(int k, int i) { work[k] += i; }

static __attribute__((noinline)) void step(int i) {
  if (i % 4 != 0)
    note(0, i);
  else
    note(1, i);
  if (busy[i & 0xffff])
    note(2, i);
  else
    note(3, i);
}

/* Called with a second argument only: code enough that 5% of the module's
 * instructions pays for one copy of step's second test. */
static __attribute__((noinline)) void table(void) {
  printf("  %d: %ld\n", 0, work[0] * 1);
  printf("  %d: %ld\n", 1, work[1] * 2);
  printf("  %d: %ld\n", 2, work[2] * 3);
  printf("  %d: %ld\n", 3, work[3] * 4);
  printf("  %d: %ld\n", 4, work[0] * 5);
  printf("  %d: %ld\n", 5, work[1] * 6);
  printf("  %d: %ld\n", 6, work[2] * 7);
  printf("  %d: %ld\n", 7, work[3] * 8);
  printf("  %d: %ld\n", 8, work[0] * 9);
  printf("  %d: %ld\n", 9, work[1] * 10);
  printf("  %d: %ld\n", 10, work[2] * 11);
  printf("  %d: %ld\n", 11, work[3] * 12);
  printf("  %d: %ld\n", 12, work[0] * 13);
  printf("  %d: %ld\n", 13, work[1] * 14);
  printf("  %d: %ld\n", 14, work[2] * 15);
  printf("  %d: %ld\n", 15, work[3] * 16);
  printf("  %d: %ld\n", 16, work[0] * 17);
  printf("  %d: %ld\n", 17, work[1] * 18);
  printf("  %d: %ld\n", 18, work[2] * 19);
  printf("  %d: %ld\n", 19, work[3] * 20);
  printf("  %d: %ld\n", 20, work[0] * 21);
  printf("  %d: %ld\n", 21, work[1] * 22);
  printf("  %d: %ld\n", 22, work[2] * 23);
  printf("  %d: %ld\n", 23, work[3] * 24);
  printf("  %d: %ld\n", 24, work[0] * 25);
  printf("  %d: %ld\n", 25, work[1] * 26);
  printf("  %d: %ld\n", 26, work[2] * 27);
  printf("  %d: %ld\n", 27, work[3] * 28);
  printf("  %d: %ld\n", 28, work[0] * 29);
  printf("  %d: %ld\n", 29, work[1] * 30);
  printf("  %d: %ld\n", 30, work[2] * 31);
  printf("  %d: %ld\n", 31, work[3] * 32);
  printf("  %d: %ld\n", 32, work[0] * 33);
  printf("  %d: %ld\n", 33, work[1] * 34);
  printf("  %d: %ld\n", 34, work[2] * 35);
  printf("  %d: %ld\n", 35, work[3] * 36);
  printf("  %d: %ld\n", 36, work[0] * 37);
  printf("  %d: %ld\n", 37, work[1] * 38);
  printf("  %d: %ld\n", 38, work[2] * 39);
  printf("  %d: %ld\n", 39, work[3] * 40);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < n && i < (1 << 16); i++)
    busy[i] = i % 4 != 0;
  for (int i = 0; i < n; i++)
    step(i);
  printf("%ld %ld %ld %ld\n", work[0], work[1], work[2], work[3]);
  if (argc > 2)
    table();
  return 0;
}
