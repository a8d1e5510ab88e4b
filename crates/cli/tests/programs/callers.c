/* Entry counts given by callers: which functions count their own entries
   and which take them from their call sites, with counts derivable by hand.
   Output: "s 456794 fact 3628800 ping 0\n". */
#include <stdio.h>
#include <stdlib.h>

/* One block, called from two sites: its callers give its 134 entries and it
   counts nothing. */
static int square(int x) { return x * x; }

/* Branches: its 34 entries come from the callers, its branches counted. */
static int half(int x) {
  if (x & 1) /* @half_odd */
    return (x - 1) / 2;
  return x / 2;
}

/* Its address is taken: it counts its own 100 entries. */
static int via_pointer(int x) { return x + 1; }

/* Recursive: its 10 entries include its own calls, so it counts them. */
static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

/* Mutually recursive: ping 4, pong 4. */
static int ping(int n);
static int pong(int n) { return n ? ping(n - 1) : 0; }
static int ping(int n) { return n ? pong(n - 1) : 1; }

/* Might not return (it may call exit): a call after it in the same block
   is no call site, so `after_exit` counts its own 100 entries, while
   `may_exit`'s come from its call site. */
static int may_exit(int x) {
  if (x == 12345)
    exit(3);
  return x;
}
static int after_exit(int x) { return x - 1; }

/* External: another module could call it, so it counts its own 1 entry. */
long loop(int (*f)(int)) {
  long s = 0;
  for (int i = 0; i < 100; i++) {
    s += square(i) + f(i);
    if (i % 3 == 0)
      s += half(i) + square(i); /* @every_third */
    s += may_exit(i) + after_exit(i);
  }
  return s;
}

int main(void) {
  int r = fact(10);
  int p = -1;
  if (r > 0) /* each call the first of its block */
    p = ping(7);
  int (*volatile f)(int) = via_pointer;
  long s = loop(f);
  printf("s %ld fact %d ping %d\n", s, r, p);
  return 0;
}
