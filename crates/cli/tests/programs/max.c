/* max.c: Weinberger's example. Find the maximum of N = 1000 pseudo-random
 * numbers and count how often the "new maximum" assignment runs.
 *
 * The numbers come from this linear congruential generator (32-bit unsigned
 * arithmetic, wrapping):
 *     seed_0 = 12345;  seed_{k+1} = seed_k * 1103515245 + 12345;
 *     a[k] = (seed_{k+1} >> 16) & 0x7fff            for k = 0 .. 999
 * find_max starts from max = a[0] and, for i = 1 .. 999, runs the assignment
 * (@newmax) when a[i] > max: it runs once per strict left-to-right maximum of
 * a[1..] (a "record"). That number depends on the sequence, so the test
 * computes it with the same generator in Rust; the loop test (@cmp) runs 999
 * times, next_rand runs 1000 times.
 * Output: "max M updates U\n"; exit status 0.
 */
#include <stdio.h>

#define N 1000

static unsigned seed = 12345u;
volatile int n_items = N;
volatile unsigned updates;

__attribute__((noinline)) unsigned next_rand(void) {
  seed = seed * 1103515245u + 12345u;
  return (seed >> 16) & 0x7fffu;
}

__attribute__((noinline)) unsigned find_max(const unsigned *a, int n) {
  unsigned max = a[0];
  for (int i = 1; i < n; i++) {
    if (a[i] > max) { /* @cmp */
      max = a[i]; updates++; /* @newmax */
    }
  }
  return max;
}

int main(void) {
  static unsigned a[N];
  int n = n_items;
  for (int i = 0; i < n; i++)
    a[i] = next_rand();
  unsigned m = find_max(a, n);
  printf("max %u updates %u\n", m, updates);
  return 0;
}
