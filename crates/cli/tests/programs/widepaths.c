/* widepaths.c: one function with 2^40 acyclic paths, more than 2^32, so
 * that its path ids do not fit 32 bits, counted in a hash table through
 * its inline cache.
 *
 * bits40(x) is 40 `if`s in a row, the k-th testing bit k of x and storing to
 * a volatile (so that -O2 keeps every branch): the `then` line @wk is on
 * the path taken exactly when bit k of x is set. main calls it with the
 * masks m_i = (i * 0x9e3779b97f4a7c15) mod 2^40 for i = 0..2999,
 * round-robin, 3 rounds (9000 calls, each mask 3 times): 3000 paths in a
 * cache of 16384 slots, where a few hundred share a slot (3000^2 / 2^15
 * pairs expected), evict each other (a path takes a slot from one run as
 * often, as in these lockstep rounds) and run again from the cache or miss.
 * Output: the number of bits set over all calls; exit status 0.
 */
#include <stdio.h>

volatile unsigned hit;
volatile int rounds = 3;
unsigned long long ones;

__attribute__((noinline)) void bits40(unsigned long long x) {
  if (x & (1ull << 0))
    hit = 0; /* @w0 */
  if (x & (1ull << 1))
    hit = 1; /* @w1 */
  if (x & (1ull << 2))
    hit = 2; /* @w2 */
  if (x & (1ull << 3))
    hit = 3; /* @w3 */
  if (x & (1ull << 4))
    hit = 4; /* @w4 */
  if (x & (1ull << 5))
    hit = 5; /* @w5 */
  if (x & (1ull << 6))
    hit = 6; /* @w6 */
  if (x & (1ull << 7))
    hit = 7; /* @w7 */
  if (x & (1ull << 8))
    hit = 8; /* @w8 */
  if (x & (1ull << 9))
    hit = 9; /* @w9 */
  if (x & (1ull << 10))
    hit = 10; /* @w10 */
  if (x & (1ull << 11))
    hit = 11; /* @w11 */
  if (x & (1ull << 12))
    hit = 12; /* @w12 */
  if (x & (1ull << 13))
    hit = 13; /* @w13 */
  if (x & (1ull << 14))
    hit = 14; /* @w14 */
  if (x & (1ull << 15))
    hit = 15; /* @w15 */
  if (x & (1ull << 16))
    hit = 16; /* @w16 */
  if (x & (1ull << 17))
    hit = 17; /* @w17 */
  if (x & (1ull << 18))
    hit = 18; /* @w18 */
  if (x & (1ull << 19))
    hit = 19; /* @w19 */
  if (x & (1ull << 20))
    hit = 20; /* @w20 */
  if (x & (1ull << 21))
    hit = 21; /* @w21 */
  if (x & (1ull << 22))
    hit = 22; /* @w22 */
  if (x & (1ull << 23))
    hit = 23; /* @w23 */
  if (x & (1ull << 24))
    hit = 24; /* @w24 */
  if (x & (1ull << 25))
    hit = 25; /* @w25 */
  if (x & (1ull << 26))
    hit = 26; /* @w26 */
  if (x & (1ull << 27))
    hit = 27; /* @w27 */
  if (x & (1ull << 28))
    hit = 28; /* @w28 */
  if (x & (1ull << 29))
    hit = 29; /* @w29 */
  if (x & (1ull << 30))
    hit = 30; /* @w30 */
  if (x & (1ull << 31))
    hit = 31; /* @w31 */
  if (x & (1ull << 32))
    hit = 32; /* @w32 */
  if (x & (1ull << 33))
    hit = 33; /* @w33 */
  if (x & (1ull << 34))
    hit = 34; /* @w34 */
  if (x & (1ull << 35))
    hit = 35; /* @w35 */
  if (x & (1ull << 36))
    hit = 36; /* @w36 */
  if (x & (1ull << 37))
    hit = 37; /* @w37 */
  if (x & (1ull << 38))
    hit = 38; /* @w38 */
  if (x & (1ull << 39))
    hit = 39; /* @w39 */
  ones += (unsigned long long)__builtin_popcountll(x);
}

int main(void) {
  for (int r = 0; r < rounds; r++)
    for (unsigned long long i = 0; i < 3000; i++)
      bits40((i * 0x9e3779b97f4a7c15ull) & 0xffffffffffull);
  printf("ones %llu\n", ones);
  return 0;
}
