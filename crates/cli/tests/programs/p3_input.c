/* p3_input.c: partitioned path profiling's end-to-end program (tests/cli/
 * p3.rs). It reads its standard input (which `pathprof p3 run` reads once
 * and feeds to every copy), classifies each character through a chain of
 * tests (classify: many paths, one call site, so P3 partitions it), and
 * prints the totals of the first round; its exit status is the number of
 * lines modulo 7.
 *
 * P3_ROUNDS (default 1) rounds go over the input, but only the first
 * round's totals are printed: copies started with different rounds print
 * the same and count differently, which only the merge of their profiles
 * can tell.
 */
#include <stdio.h>
#include <stdlib.h>

struct totals {
  long lower, upper, digits, spaces, lines, punct, other, words;
};

static void classify(int c, int *in_word, struct totals *t) {
  int letter = 0;
  if (c >= 'a' && c <= 'z') {
    t->lower++;
    letter = 1;
  } else if (c >= 'A' && c <= 'Z') {
    t->upper++;
    letter = 1;
  } else if (c >= '0' && c <= '9') {
    t->digits++;
  } else if (c == ' ' || c == '\t') {
    t->spaces++;
  } else if (c == '\n') {
    t->lines++;
  } else if (c == '.' || c == ',' || c == ';' || c == '!' || c == '?') {
    t->punct++;
  } else {
    t->other++;
  }
  if (letter && !*in_word)
    t->words++;
  *in_word = letter;
}

int main(void) {
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, stdin);
  const char *r = getenv("P3_ROUNDS");
  int rounds = r ? atoi(r) : 1;
  struct totals first = {0};
  for (int round = 0; round < rounds; round++) {
    struct totals t = {0};
    int in_word = 0;
    for (size_t i = 0; i < n; i++)
      classify((unsigned char)buf[i], &in_word, &t);
    if (round == 0)
      first = t;
  }
  printf("lower %ld upper %ld digits %ld spaces %ld\n", first.lower, first.upper,
         first.digits, first.spaces);
  printf("lines %ld punct %ld other %ld words %ld\n", first.lines, first.punct,
         first.other, first.words);
  return (int)(first.lines % 7);
}
