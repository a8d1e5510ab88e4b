/* fork.c: the program forks; parent and child both do known work and both
 * write their counts to the same profile file, which merges them.
 *
 *   before fork: work(10)            -> 10 iterations, printed by the parent
 *   child:       work(30), returns 4 -> 30 iterations
 *   parent:      waits for the child, then work(20) -> 20 iterations
 * work is called 3 times in all and its loop body (@work) runs 10 + 30 + 20 =
 * 60 times: the counts from before the fork are written once (by the parent),
 * not by the child too. work(n) = n(n-1)/2: 45, 435, 190.
 * Output: "pre 45\nchild 435\nparent 190 child-status 4\n", exit status 7.
 * (main's activation straddles the fork, so its own counts are checked only
 * for what is well defined.)
 */
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int pre_n = 10, child_n = 30, parent_n = 20;

__attribute__((noinline)) long work(int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    s += i; /* @work */
  }
  return s;
}

int main(void) {
  printf("pre %ld\n", work(pre_n));
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return 99;
  if (pid == 0) {
    printf("child %ld\n", work(child_n));
    return 4;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid)
    return 98;
  printf("parent %ld child-status %d\n", work(parent_n), WEXITSTATUS(status));
  return 7;
}
