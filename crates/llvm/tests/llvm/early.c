/* Early termination, for Call probes: main() calls work(i) for i in 0..5,
 * work() calls leaf() then printf, and leaf() on its 3rd call does what
 * argv[1] says:
 *   exit  calls exit(0) (three frames are in a call when the process ends);
 *   jump  longjmps back to main's setjmp (which prints "jumped" and returns);
 *   zero  has the fake runtime set every counter to 0 (as a fork child's
 *         reset does), then returns;
 * anything else returns. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fake_rt.c's; a no-op when built without it. */
__attribute__((weak)) void fake_rt_set_counters(uint64_t value) { (void)value; }

static const char *what = "";
static int calls;
static jmp_buf env;

__attribute__((noinline)) void leaf(void) {
  if (++calls != 3)
    return;
  if (strcmp(what, "exit") == 0)
    exit(0);
  if (strcmp(what, "jump") == 0)
    longjmp(env, 1);
  if (strcmp(what, "zero") == 0)
    fake_rt_set_counters(0);
}

__attribute__((noinline)) int work(int i) {
  leaf();
  printf("work %d\n", i);
  return i * 2;
}

int main(int argc, char **argv) {
  if (argc > 1)
    what = argv[1];
  if (setjmp(env) != 0) {
    printf("jumped\n");
    return 0;
  }
  int sum = 0;
  for (int i = 0; i < 5; i++)
    sum += work(i);
  printf("sum %d\n", sum);
  return 0;
}
