/* p3_aslr.c: not deterministic, on purpose (tests/cli/p3.rs). With
 * address-space layout randomisation on, each run prints other addresses of
 * a stack and a heap object and takes other paths through the test of
 * their bits, so P3's copies of it run differently, and `pathprof p3 run`
 * must refuse to merge them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int local = 0;
  char *heap = malloc(16);
  uintptr_t bits = (uintptr_t)&local ^ (uintptr_t)heap;
  int ones = 0;
  for (int i = 4; i < 40; i++)
    if ((bits >> i) & 1)
      ones++;
  printf("stack %p heap %p ones %d\n", (void *)&local, (void *)heap, ones);
  free(heap);
  return 0;
}
