/* pure.c: functions LLVM knows (or is told) touch no memory. Once instrumented
 * they count into global counters, so the attributes that say otherwise must
 * go, or the optimiser moves counter updates across the function's own
 * recursive calls, merges calls and loses counts.
 *
 *   tri(n): calls tri(n-i) for i = 1..3 while i < n:
 *     T(n) = 1 for n <= 1, else 1 + sum of T(n-i) for i = 1..3 with i < n.
 *     T(15) = 6872 calls; its loop body runs once per call made by it:
 *     6871 times.
 *   even/odd: mutual recursion, declared const; even(20) makes 11 calls of
 *     even and 10 of odd.
 *   lookup: declared pure, called in a loop with a different index each time:
 *     100 calls, its table read 100 times.
 *   Output: "3136 1 4950" (tri(15), even(20), the sum of the table).
 */
#include <stdio.h>

__attribute__((noinline)) int tri(int n) {
  if (n <= 1)
    return 1;
  int s = 0;
  for (int i = 1; i <= 3 && i < n; i++)
    s += tri(n - i); /* @tri_loop */
  return s;
}

__attribute__((const, noinline)) int odd(int n);
__attribute__((const, noinline)) int even(int n) { return n == 0 ? 1 : odd(n - 1); }
__attribute__((const, noinline)) int odd(int n) { return n == 0 ? 0 : even(n - 1); }

static int table[100];
__attribute__((pure, noinline)) int lookup(int i) { return table[i]; /* @lookup */ }

volatile int one = 1;

int main(void) {
  for (int i = 0; i < 100; i++)
    table[i] = i;
  int sum = 0;
  for (int i = 0; i < 100; i++)
    sum += lookup(i);
  printf("%d %d %d\n", tri(14 + one), even(19 + one), sum);
  return 0;
}
