/* Counted calls (calls that might not return, docs/formats.md §1) for the
 * extraction tests. Each function's comment says which calls count. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct big {
  char bytes[64];
};
static jmp_buf env;

/* const: clang declares it willreturn. */
__attribute__((const, noinline)) int twice(int x) { return 2 * x; }

/* b0: printf, f(), printf count; memcpy (llvm.memcpy), lifetime markers,
 * strlen and twice (willreturn) and inline asm do not. Then a block with
 * longjmp and one with exit. */
__attribute__((noinline)) void mixed(struct big *out, const struct big *in,
                                     void (*f)(void), int x) {
  struct big tmp;
  memcpy(&tmp, in, sizeof tmp);
  printf("%d %zu\n", twice(x), strlen(tmp.bytes));
  __asm__ volatile("" ::: "memory");
  f();
  *out = tmp;
  printf("%d\n", x);
  if (x > 5)
    longjmp(env, 1);
  if (x < 0)
    exit(x);
}

/* setjmp returns twice and does not count; puts does. */
int main(void) {
  struct big a = {{0}}, b;
  if (setjmp(env))
    return puts("jumped");
  mixed(&b, &a, abort, 1);
  return 0;
}
