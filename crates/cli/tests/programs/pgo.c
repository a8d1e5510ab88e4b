/* Profile use: every branch's count by hand for `pgo 12` (see tests/cli/pgo.rs). */
#include <stdio.h>
#include <stdlib.h>

/* Inlined everywhere (even at -O0): 15 calls, 6 above 100. */
static inline __attribute__((always_inline)) int clamp(int v) {
  if (v > 100)
    return 100;
  return v;
}

/* fib(12): 465 calls, 233 of them with n < 2. */
static int fib(int n) {
  if (n < 2)
    return n;
  return fib(n - 1) + fib(n - 2);
}

/* 12 calls, 3 of each case. */
static int kind(int x) {
  switch (x & 3) {
  case 0:
    return 10;
  case 1:
    return 20;
  case 2:
    return 30;
  default:
    return 40;
  }
}

/* Never called: cold. */
static __attribute__((noinline)) void never(void) { puts("never"); }

int main(int argc, char **argv) {
  if (argc > 5)
    never();
  int n = argc > 1 ? atoi(argv[1]) : 12;
  long total = 0;
  for (int i = 0; i < n; i++) {
    total += clamp(kind(i) * i);
    if (i % 4 == 0)
      total += clamp(i);
  }
  printf("%ld %d\n", total, fib(n));
  return 0;
}
