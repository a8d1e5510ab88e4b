/* fnptr.c (with fnptr_ops.c, a second translation unit): calls through
 * function pointers, from a table and from a callback.
 *
 * main calls table[sel[i]] for the 12 selectors 0 1 2 0 0 1 2 2 2 0 1 0:
 *   op_add (0) 5 times, op_sub (1) 3 times, op_mul (2) 4 times;
 * then apply(op_add, 7, acc) calls op_add 7 more times and apply(op_mul, 3,
 * acc) calls op_mul 3 more times; apply's loop body (@apply_body) runs 7 + 3
 * = 10 times. Totals: op_add 12, op_sub 3, op_mul 7, apply 2.
 * The program prints the accumulator (whatever it is: the reference build
 * prints the same) and exits with status 12.
 */
#include <stdio.h>

int op_add(int a, int b);
int op_sub(int a, int b);
int op_mul(int a, int b);
int apply(int (*f)(int, int), int n, int x);

static int (*const table[3])(int, int) = {op_add, op_sub, op_mul};
volatile int sel[12] = {0, 1, 2, 0, 0, 1, 2, 2, 2, 0, 1, 0};

int main(void) {
  int acc = 1;
  for (int i = 0; i < 12; i++)
    acc = table[sel[i]](acc, i + 2);
  acc = apply(op_add, 7, acc);
  acc = apply(op_mul, 3, acc);
  printf("acc %d\n", acc);
  return 12;
}
