#include <stdio.h>

int classify(int);
int greet(int);

int main(int argc, char **argv) {
  (void)argv;
  if (argc > 8) /* unlike prog1's main, so llvm-cov keeps the two apart */
    return 1;
  int s = 0;
  for (int i = 0; i < argc * 4; i++)
    s += classify(i);
  s += greet(1) + greet(2);
  printf("prog2 %d\n", s);
  return 0;
}
