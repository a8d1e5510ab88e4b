/* Two translation units linked into one module (with two_b.c). */
#include <stdio.h>

int helper(int x);

int main(void) {
  int total = 0;
  for (int i = 0; i < 7; i++)
    total += helper(i);
  printf("total %d\n", total);
  return 0;
}
