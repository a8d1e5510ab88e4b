/* destructor.c: counts made in destructors (`.fini_array`), which run after
 * exit()'s atexit handlers, the runtime's dump among them.
 *
 * main calls work(5); the destructor late() calls work(7); the destructor
 * last() (priority 101: it runs after late) calls work(9). So work is called
 * 3 times and its loop body runs 5 + 7 + 9 = 21 times; late and last are
 * entered once each.
 * Output: "main 10\nlate 21\nlast 36\n"; exit status 0.
 */
#include <stdio.h>

__attribute__((noinline)) long work(int n) {
  long s = 0;
  for (int k = 0; k < n; k++) {
    s += k; /* @work */
  }
  return s;
}

__attribute__((destructor)) static void late(void) {
  printf("late %ld\n", work(7)); /* @late */
}

__attribute__((destructor(101))) static void last(void) {
  printf("last %ld\n", work(9)); /* @last */
}

int main(void) {
  printf("main %ld\n", work(5));
  return 0;
}
