/* fnptr_ops.c: the callees of fnptr.c, in their own translation unit (see
 * fnptr.c for the counts). */

int op_add(int a, int b) { return a + b; }

int op_sub(int a, int b) { return a - b; }

int op_mul(int a, int b) { return (a * b) % 1009; }

int apply(int (*f)(int, int), int n, int x) {
  for (int i = 0; i < n; i++) {
    x = f(x, i + 1); /* @apply_body */
  }
  return x;
}
