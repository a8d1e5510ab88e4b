/* Test program for pathprof-llvm: one function per CFG shape the instrumenter
 * must handle. Its stdout must not change when instrumented. */
#include <stdio.h>

volatile int sink;

/* if/else: a diamond. */
__attribute__((noinline)) int branch(int x) {
  int r;
  if (x > 10)
    r = x * 2;
  else
    r = x - 1;
  return r;
}

/* A counted loop. */
__attribute__((noinline)) int loop(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += i ^ sink;
  return s;
}

/* A switch with two cases to one block: a multi-edge. */
__attribute__((noinline)) int step(int x) { return x + sink; }
__attribute__((noinline)) int multi(int x) {
  int r = 0;
  switch (x) {
  case 1:
  case 2:
    r = step(7);
    break;
  case 3:
    sink = 3;
    r = 9;
    break;
  case 5:
    r = step(x) * 2;
    break;
  default:
    break;
  }
  return r;
}

/* Two cases straight to the join: a multi-edge into a block with a phi. */
__attribute__((noinline)) int pick(int x) {
  int r;
  switch (x) {
  case 1:
  case 2:
    r = 5;
    break;
  case 3:
    r = step(3);
    break;
  default:
    r = step(0) * 4;
    break;
  }
  return r;
}

/* An if without else: the edge from the test to the join is critical. */
__attribute__((noinline)) int crit(int x) {
  int r = x;
  if (x & 1) {
    sink = x;
    r = x * 3;
  }
  return r;
}

/* Computed goto: indirectbr edges cannot be split. */
__attribute__((noinline)) int jump(int i) {
  static void *targets[] = {&&even, &&odd};
  goto *targets[i & 1];
even:
  sink += 1;
  return 1;
odd:
  sink += 2;
  return 2;
}

/* Clears low bits one at a time: a single-block loop (a self loop at -O1). */
__attribute__((noinline)) int bits(unsigned x) {
  int n = 0;
  while (x) {
    x &= x - 1;
    n++;
  }
  return n;
}

/* musttail: code at the end of the block must go before the call. */
__attribute__((noinline)) int tail_target(int x) { return x + sink; }
__attribute__((noinline)) int tail(int x) {
  if (x > 100)
    return 0;
  __attribute__((musttail)) return tail_target(x);
}

/* asm goto: callbr edges cannot be split. */
__attribute__((noinline)) int asm_jump(int x) {
#if defined(__x86_64__)
  asm goto("testl %0, %0\n\tjne %l1" : : "r"(x) : "cc" : nonzero);
#else
  if (x)
    goto nonzero;
#endif
  sink = 0;
  return 0;
nonzero:
  sink = x;
  return 1;
}

/* An existing constructor: llvm.global_ctors must keep it. */
__attribute__((constructor)) static void hello(void) { printf("hello from a constructor\n"); }

int main(void) {
  long total = 0;
  for (int i = 0; i < 20; i++) {
    total += branch(i);
    total += loop(i % 5);
    total += multi(i % 6);
    total += pick(i % 4);
    total += crit(i);
    total += jump(i);
    total += bits((unsigned)i);
    total += tail(i * 10);
    total += asm_jump(i % 3);
  }
  printf("total %ld\n", total);
  return 0;
}
