/* The shared library libgreet.so; its version script exports only greet. */
#include "util.h"

static int calls;

int greet_internal(int n) { return clamp(n, 3); }

int greet(int n) {
  calls++;
  return greet_internal(n) + calls;
}
