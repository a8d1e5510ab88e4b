#include <stdio.h>

int classify(int);
int greet(int);

int main(void) {
  int s = 0;
  for (int i = 0; i < 30; i++)
    s += classify(i);
  s += greet(7);
  printf("prog1 %d\n", s);
  return 0;
}
