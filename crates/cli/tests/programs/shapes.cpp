// shapes.cpp: C++ — virtual calls, template instantiations, mangled linkage
// names, and an exception caught in a loop (invoke and landing-pad edges,
// which cannot be split).
//
// total_area(shapes, 5) calls area() on a c b d e, total_area(shapes, 2) on
// a c:
//   Square::area (_ZNK6Square4areaEv): a b, then a        -> 3 calls
//   Rect::area   (_ZNK4Rect4areaEv):   c d e, then c      -> 4 calls
//   total_area's loop body (@call) runs 5 + 2 = 7 times; total_area 2 calls.
//   Areas: a 4, b 9, c 10, d 7, e 16: 46 and 14, 60 in all.
// twice<int> (_Z5twiceIiET_S0_) is called twice, twice<long>
// (_Z5twiceIlET_S0_) once: 42 + 2000000000000 + 6.
// checked(v) (_Z7checkedl) is called for v = 0 10 20 ... 70 (8 calls); it
// throws for 60 and 70 (@throw, 2 times) and returns the other 6 (@ok):
// 0+10+20+30+40+50 = 150; main's handler runs 2 times, calling note_caught
// (_Z11note_caughtl) twice (a call, because the handler's first block also holds
// the catch's own bookkeeping, on the `catch` line). checked's
// throwing activations never return: only block counters see them whole.
// Output: "area 60 twice 2000000000048 ok 150 caught 2\n", exit status 2.
#include <cstdio>

struct Shape {
  virtual ~Shape() {}
  virtual long area() const = 0;
};

struct Square : Shape {
  long side;
  explicit Square(long s) : side(s) {}
  long area() const override { return side * side; }
};

struct Rect : Shape {
  long w, h;
  Rect(long w, long h) : w(w), h(h) {}
  long area() const override { return w * h; }
};

__attribute__((noinline)) long total_area(Shape *const *shapes, int n) {
  long t = 0;
  for (int i = 0; i < n; i++) {
    t += shapes[i]->area(); /* @call */
  }
  return t;
}

template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }

struct Bad {
  long value;
};

volatile int n_checks = 8;
int caught = 0;

__attribute__((noinline)) void note_caught(long value) {
  if (value > 50)
    caught++;
}

__attribute__((noinline)) long checked(long v) {
  if (v > 50)
    throw Bad{v}; /* @throw */
  return v; /* @ok */
}

int main() {
  Square a(2), b(3);
  Rect c(2, 5), d(1, 7), e(4, 4);
  Shape *shapes[] = {&a, &c, &b, &d, &e};
  long area = total_area(shapes, 5) + total_area(shapes, 2);
  long tw = twice(21) + twice(1000000000000L) + twice(3);
  long ok = 0;
  for (int i = 0; i < n_checks; i++) {
    try {
      ok += checked(i * 10L);
    } catch (const Bad &bad) {
      note_caught(bad.value);
    }
  }
  std::printf("area %ld twice %ld ok %ld caught %d\n", area, tw, ok, caught);
  return caught;
}
