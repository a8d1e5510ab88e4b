/* irreducible.c: a `goto` into the middle of a loop, which makes the loop
 * irreducible (it has two entries: its header and the label `mid`).
 *
 * irr(n, start_mid): without the jump the loop runs n times, each iteration
 * running @top then @mid. With the jump, the first iteration skips @top.
 *
 *   call          @jump   @top   @mid   result
 *   irr(4, 0)       0       4      4     4 * 3          = 12
 *   irr(4, 1)       1       3      4     2 + 3 * 3      = 11
 *   irr(0, 1)       1       0      1     2              =  2
 *   irr(6, 1)       1       5      6     2 + 5 * 3      = 17
 *   total           3      12     15                      42
 *
 * irr is called 4 times. Output: "irr 12 11 2 17\n", exit status 42.
 */
#include <stdio.h>

volatile int args[4][2] = {{4, 0}, {4, 1}, {0, 1}, {6, 1}};

__attribute__((noinline)) int irr(int n, int start_mid) {
  int i = 0, s = 0;
  if (start_mid)
    goto mid; /* @jump */
  while (i < n) {
    s += 1; /* @top */
  mid:
    s += 2; /* @mid */
    i++;
  }
  return s;
}

int main(void) {
  int r[4], total = 0;
  for (int k = 0; k < 4; k++) {
    r[k] = irr(args[k][0], args[k][1]);
    total += r[k];
  }
  printf("irr %d %d %d %d\n", r[0], r[1], r[2], r[3]);
  return total;
}
