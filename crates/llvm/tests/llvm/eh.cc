// C++ test program for pathprof-llvm: invoke, landing pads, unwind edges, and
// mangled names. Its stdout must not change when instrumented.
#include <cstdio>
#include <stdexcept>

namespace ns {

__attribute__((noinline)) int may_throw(int x) {
  if (x % 3 == 0)
    throw std::runtime_error("three");
  return x;
}

__attribute__((noinline)) int guarded(int x) {
  try {
    return may_throw(x) + may_throw(x + 1);
  } catch (const std::exception &) {
    return -1;
  }
}

} // namespace ns

int main() {
  int total = 0;
  for (int i = 0; i < 10; i++)
    total += ns::guarded(i);
  std::printf("total %d\n", total);
  return 0;
}
