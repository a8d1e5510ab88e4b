/* In the static library libshape.a, linked into both programs. */
#include "util.h"

int classify(int x) {
  if (x % 3 == 0)
    return clamp(x, 10);
  if (x % 3 == 1)
    return -clamp(x, 5);
  return 0;
}
