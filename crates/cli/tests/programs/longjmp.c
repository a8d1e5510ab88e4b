/* longjmp.c: a longjmp out of nested calls back to a setjmp in main's loop.
 *
 *   i = 0..9; inner(i) longjmps when i % 3 == 0 (i = 0, 3, 6, 9: 4 jumps) on
 *   its first call from outer; otherwise outer calls it twice and returns 2.
 *   inner: 4 + 6 * 2 = 16 calls; outer: 10 calls; setjmp returns 14 times
 *   (10 + 4 jumps); @jumped runs 4 times, @normal 10 (4 of its calls to
 *   outer never return).
 *   Output: "jumps 4 sum 12", exit status 4.
 *   Without --early-exit the paths in progress in outer (4) and main's path
 *   that called it are lost: main reports them (lost_paths 4).
 */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;

__attribute__((noinline)) void inner(int i) {
  if (i % 3 == 0)
    longjmp(env, i + 1);
}

__attribute__((noinline)) int outer(int i) {
  int s = 0;
  for (int k = 0; k < 2; k++) {
    inner(i);
    s++;
  }
  return s;
}

int main(void) {
  volatile int jumps = 0, sum = 0;
  for (volatile int i = 0; i < 10; i++) {
    if (setjmp(env)) {
      jumps++; /* @jumped */
      continue;
    }
    sum += outer(i); /* @normal */
  }
  printf("jumps %d sum %d\n", jumps, sum);
  return jumps;
}
