/* switch.c: a switch with two cases sharing one target (a multi-edge: two CFG
 * edges from the switch block to the same block), a fallthrough, and a default.
 *
 * classify(c) runs once per input; the 14 inputs are
 *     1 5 2 1 7 9 1 0 5 2 1 3 9 2
 *   value 1: positions 0 3 6 10  -> 4 times   (case 1, edge to @shared)
 *   value 5: positions 1 8       -> 2 times   (case 5, the other edge to @shared)
 *   value 2: positions 2 9 13    -> 3 times
 *   value 9: positions 5 12      -> 2 times   (falls through into case 2)
 *   others : 7 0 3               -> 3 times   (default)
 * so
 *   @shared runs 4 + 2 = 6 times, through two edges counted 4 and 2;
 *   @nine   runs 2 times;
 *   @two    runs 3 + 2 = 5 times (3 from the switch, 2 by fallthrough);
 *   @other  runs 3 times;
 *   classify is called 14 times.
 * The sum of the inputs is 48, the exit status.
 * Output: "shared 6 nine 2 two 5 other 3\n".
 */
#include <stdio.h>

volatile int inputs[14] = {1, 5, 2, 1, 7, 9, 1, 0, 5, 2, 1, 3, 9, 2};
volatile int shared, nine, two, other;

__attribute__((noinline)) int classify(int c) {
  switch (c) {
  case 1:
  case 5:
    shared++; /* @shared */
    break;
  case 9:
    nine++; /* @nine */
    /* fall through */
  case 2:
    two++; /* @two */
    break;
  default:
    other++; /* @other */
    break;
  }
  return c;
}

int main(void) {
  int sum = 0;
  for (int i = 0; i < 14; i++)
    sum += classify(inputs[i]);
  printf("shared %d nine %d two %d other %d\n", shared, nine, two, other);
  return sum;
}
