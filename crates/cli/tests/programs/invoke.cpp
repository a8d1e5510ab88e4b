/* invoke.cpp: exit() called while a C++ caller's invoke is in progress.
 *
 * run(10) loops i = 0..9; each iteration makes a Guard (whose destructor
 * makes the call to step an `invoke` with a cleanup) and calls step(i) in a
 * try block. step throws at i = 3 and i = 5 (caught in run, which calls
 * caught() 2 times, the exception unwinding through the invoke into its
 * landing pad) and calls
 * exit(7) at i = 7, inside the invoke. So step is called 8 times (i = 0..7),
 * returns normally 5 times (@stepped: i = 0, 1, 2, 4, 6), and ~Guard runs 7
 * times (i = 0..6; exit runs no destructors of the frames it leaves). total:
 * +0 +1 +2 -3 +4 -5 +6 = 5. main, run and step never return from their last
 * activation.
 * Output: "exit at 7 total 5 released 7\n", exit status 7.
 */
#include <cstdio>
#include <cstdlib>

static int released;
static volatile int total;

struct Guard {
  __attribute__((noinline)) ~Guard() {
    released++; /* @dtor */
  }
};

__attribute__((noinline)) int step(int i) {
  if (i == 3 || i == 5)
    throw i;
  if (i == 7) {
    std::printf("exit at %d total %d released %d\n", i, total, released);
    std::exit(i);
  }
  return i;
}

static volatile int thrown;

__attribute__((noinline)) int caught(int e) {
  thrown += e;
  return e;
}

__attribute__((noinline)) void run(int n) {
  for (int i = 0; i < n; i++) {
    Guard g;
    try {
      total += step(i); /* @stepped */
    } catch (int e) {
      total -= caught(e);
    }
  }
}

int main() {
  run(10);
  std::printf("not reached\n");
  return 0;
}
