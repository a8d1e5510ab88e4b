/* recursion.c: plain and mutual recursion; every activation has its own path
 * register, so recursion must not disturb path counts.
 *
 * fib(n) calls itself for n-1 and n-2 when n >= 2. Calls C(n) = 1 + C(n-1) +
 * C(n-2), C(0) = C(1) = 1, so C(2..10) = 3 5 9 15 25 41 67 109 177:
 *   fib is called 177 times for fib(10);
 *   leaves (n < 2, @leaf): L(n) = L(n-1) + L(n-2), L(0) = L(1) = 1, L(10) = 89;
 *   inner calls (@inner): 177 - 89 = 88.
 * fib(10) = 55. The store to `trace` after both calls keeps the calls out of
 * tail position, so -O2 cannot turn the recursion into a loop.
 *
 * is_even(10) -> is_odd(9) -> is_even(8) -> ... -> is_even(0):
 *   is_even is called for 10 8 6 4 2 0 (6 times), reaching its base case
 *   (@even_base) once; is_odd for 9 7 5 3 1 (5 times), never reaching its base
 *   case (@odd_base, 0 times). is_even(10) = 1.
 *
 * Output: "fib 55 calls 177 even 1\n", exit status 177.
 */
#include <stdio.h>

volatile int fib_n = 10, parity_n = 10;
long calls;
long trace[4];

__attribute__((noinline)) long fib(int n) {
  calls++;
  if (n < 2)
    return n; /* @leaf */
  long r = fib(n - 1) + fib(n - 2); /* @inner */
  trace[n & 3] += r;
  return r;
}

__attribute__((noinline)) int is_odd(int n);

__attribute__((noinline)) int is_even(int n) {
  if (n == 0)
    return 1; /* @even_base */
  return is_odd(n - 1);
}

__attribute__((noinline)) int is_odd(int n) {
  if (n == 0)
    return 0; /* @odd_base */
  return is_even(n - 1);
}

int main(void) {
  long f = fib(fib_n);
  int e = is_even(parity_n);
  printf("fib %ld calls %ld even %d\n", f, calls, e);
  return (int)calls;
}
