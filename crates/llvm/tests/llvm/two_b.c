/* Two translation units linked into one module (with two_a.c). */
int helper(int x) {
  if (x & 1)
    return x * 3;
  return x;
}
