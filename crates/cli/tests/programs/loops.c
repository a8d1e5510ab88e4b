/* loops.c: nested loops with known trip counts, `break` and `continue`, and a
 * do-while loop that -O2 turns into single-block self loops.
 *
 * Trip counts come from volatile globals so that no optimiser can fold them.
 * Lines are named by the markers in comments at their ends (the test finds the
 * line holding the marker).
 *
 * Hand derivation:
 *
 *   nest(10, 20) runs once.
 *     outer body (@outer):  a     = 10 times
 *     inner body (@inner):  a * b = 200 times
 *     result: sum_{i<10} i + 10 * sum_{j<20} j = 45 + 10 * 190 = 1945
 *
 *   skip(30) runs once. Its loop visits i = 0, 1, ..., 17 and breaks at 17:
 *     condition `i % 3 == 0` is tested 18 times (i = 0..17);
 *     `continue` (@cont) runs for i = 0, 3, 6, 9, 12, 15:          6 times
 *     condition `i == 17` is tested 18 - 6 = 12 times;
 *     `break` (@brk) runs once (i = 17);
 *     the sum (@sum) runs for the other 11 values 1 2 4 5 7 8 10 11 13 14 16,
 *     whose total is 91.
 *
 *   spin(k) is called with k = 5, 1, 9 (3 calls); its body (@spin) runs k
 *     times per call, 5 + 1 + 9 = 15 times; the loop's backedge is taken
 *     (5-1) + (1-1) + (9-1) = 12 times. At -O2 the loop is one block that
 *     branches to itself (a self loop; -O2 may also unroll it into two).
 *     At -O0 that backedge goes from the `while` line (@spin_cond) to @spin.
 *     spin(5) = 1336, spin(1) = 4, spin(9) = 186988 (v = 3v + 1, k times).
 *
 * Acyclic paths (Ball-Larus), in a build whose blocks follow the source
 * (-O0: a `for` is cond / body / inc blocks, the backedge goes inc -> cond):
 *   nest: from entry into the first inner iteration, ending with the inner
 *     backedge: 1; an inner iteration after the inner backedge: 10*19 = 190;
 *     inner exit + outer increment, ending with the outer backedge: 10;
 *     from the outer backedge into an inner iteration: 9; outer exit to
 *     return: 1.                      Counts: 1 1 9 10 190 (211 paths run).
 *   skip: entry into iteration i = 0 (continue): 1; continue after the
 *     backedge (i = 3 6 9 12 15): 5; an iteration reaching @sum: 11; the
 *     break to return (i = 17): 1.    Counts: 1 1 5 11.
 *
 * Output: "nest 1945\nskip 91\nspin 1336 4 186988\n", exit status 3.
 */
#include <stdio.h>

volatile int outer_n = 10, inner_n = 20, skip_n = 30;
volatile int spin_k[3] = {5, 1, 9};
volatile unsigned spin_sink;

__attribute__((noinline)) long nest(int a, int b) {
  long s = 0;
  for (int i = 0; i < a; i++) {
    s += i; /* @outer */
    for (int j = 0; j < b; j++) {
      s += j; /* @inner */
    }
  }
  return s;
}

__attribute__((noinline)) long skip(int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    if (i % 3 == 0)
      continue; /* @cont */
    if (i == 17)
      break; /* @brk */
    s += i; /* @sum */
  }
  return s;
}

__attribute__((noinline)) unsigned spin(unsigned k) {
  unsigned v = k;
  do {
    v = v * 3u + 1u; spin_sink = v; /* @spin */
  } while (--k); /* @spin_cond */
  return v;
}

int main(void) {
  printf("nest %ld\n", nest(outer_n, inner_n));
  printf("skip %ld\n", skip(skip_n));
  unsigned r[3];
  for (int i = 0; i < 3; i++)
    r[i] = spin(spin_k[i]);
  printf("spin %u %u %u\n", r[0], r[1], r[2]);
  return 3;
}
