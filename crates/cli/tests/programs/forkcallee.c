/* forkcallee.c: fork() in a callee whose child returns into its caller, as a
 * test runner's spawn() does: both processes go on in main's frame, which
 * only the parent entered.
 *
 * main calls work(10) (before the fork, the parent alone), then spawn(),
 * which forks and returns 0 in the child, the child's pid in the parent.
 * The child calls work(20) (@child) and returns 0 from main; the parent
 * waits for it, calls work(30) and returns 3. So main is entered
 * once and returns twice, spawn is entered once and returns twice, work is
 * called 3 times (its loop body 10 + 20 + 30 = 60 times), @child runs
 * once. (The test after spawn() runs in both processes, but it shares its
 * block with the code before the call, whose count is 1.)
 * Output: "child 190\nparent 45 435 status 0\n"; exit status 3.
 *
 * With -DWIDE, eight branches no run takes come first in main: 2^8 times
 * as many paths, so main's path array is larger than the runtime reads
 * whole, and it finds the child's resume page by page.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) long work(int n) {
  long s = 0;
  for (int k = 0; k < n; k++) {
    s += k; /* @work */
  }
  return s;
}

__attribute__((noinline)) int spawn(void) {
  fflush(stdout);
  return fork(); /* @fork */
}

#ifdef WIDE
static volatile int knob[8];
#define UNTAKEN(k) \
  if (knob[k]) __asm__ volatile("")
#endif

int main(void) {
#ifdef WIDE
  UNTAKEN(0);
  UNTAKEN(1);
  UNTAKEN(2);
  UNTAKEN(3);
  UNTAKEN(4);
  UNTAKEN(5);
  UNTAKEN(6);
  UNTAKEN(7);
#endif
  long before = work(10);
  int pid = spawn();
  if (pid == 0) {
    printf("child %ld\n", work(20)); /* @child */
    return 0;
  }
  int status = -1;
  waitpid(pid, &status, 0);
  printf("parent %ld %ld status %d\n", before, work(30), WEXITSTATUS(status));
  return 3;
}
