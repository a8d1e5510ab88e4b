/* manypaths.c: one function with 2^20 acyclic paths, far more than fit a
 * counter array, so its path counters live in a hash table.
 *
 * bits20(x) is 20 `if`s in a row, the k-th testing bit k of x and storing to a
 * volatile (so that -O2 keeps every branch). Each `if` doubles the paths:
 * 2^20 = 1048576 potential paths, and the path taken by bits20(x) is fixed by
 * x & 0xfffff: the `then` line @bk is on it exactly when bit k is set.
 *
 * main calls bits20 with x_i = i * 2654435761 (mod 2^32) for i = 0..399, then
 * with 0 five more times and with 0xfffff three times: 408 calls. The test
 * recomputes the x_i to know how often each mask ran (x_0 = 0, so mask 0
 * runs 6 times).
 * Output: the number of bits set over all calls; exit status 0.
 */
#include <stdio.h>

volatile unsigned hit;
volatile int n_calls = 400;
unsigned ones;

__attribute__((noinline)) void bits20(unsigned x) {
  if (x & 0x00001u)
    hit = 0; /* @b0 */
  if (x & 0x00002u)
    hit = 1; /* @b1 */
  if (x & 0x00004u)
    hit = 2; /* @b2 */
  if (x & 0x00008u)
    hit = 3; /* @b3 */
  if (x & 0x00010u)
    hit = 4; /* @b4 */
  if (x & 0x00020u)
    hit = 5; /* @b5 */
  if (x & 0x00040u)
    hit = 6; /* @b6 */
  if (x & 0x00080u)
    hit = 7; /* @b7 */
  if (x & 0x00100u)
    hit = 8; /* @b8 */
  if (x & 0x00200u)
    hit = 9; /* @b9 */
  if (x & 0x00400u)
    hit = 10; /* @b10 */
  if (x & 0x00800u)
    hit = 11; /* @b11 */
  if (x & 0x01000u)
    hit = 12; /* @b12 */
  if (x & 0x02000u)
    hit = 13; /* @b13 */
  if (x & 0x04000u)
    hit = 14; /* @b14 */
  if (x & 0x08000u)
    hit = 15; /* @b15 */
  if (x & 0x10000u)
    hit = 16; /* @b16 */
  if (x & 0x20000u)
    hit = 17; /* @b17 */
  if (x & 0x40000u)
    hit = 18; /* @b18 */
  if (x & 0x80000u)
    hit = 19; /* @b19 */
  ones += (unsigned)__builtin_popcount(x & 0xfffffu);
}

int main(void) {
  for (int i = 0; i < n_calls; i++)
    bits20((unsigned)i * 2654435761u);
  for (int i = 0; i < 5; i++)
    bits20(0);
  for (int i = 0; i < 3; i++)
    bits20(0xfffffu);
  printf("ones %u\n", ones);
  return 0;
}
