/* ppp.c: paths that depend on the input, for preferential path profiling
 * (`--mode=ppp`): trained on one text, run on another.
 *
 * main classifies each character of argv[1] (default "hello world 42") and
 * folds it into a hash h; spaces and punctuation stir h with mix(), 12 `if`s
 * on its bits (4096 potential paths, the one taken fixed by h & 0xfff).
 * shout() runs only on a text with capitals. Another text (capitals,
 * punctuation, other spaces) runs paths the default text never ran:
 * classify's @upper and @punct returns, main's other switch cases, mix's
 * paths for other values of h, and all of shout.
 *
 * Output: the five class counts and h; exit status 0.
 */
#include <stdio.h>

volatile unsigned sink;

__attribute__((noinline)) int classify(int c) {
  if (c >= 'a' && c <= 'z')
    return 1; /* @lower */
  if (c >= 'A' && c <= 'Z')
    return 2; /* @upper */
  if (c >= '0' && c <= '9')
    return 3; /* @digit */
  if (c == ' ')
    return 0; /* @space */
  return 4;   /* @punct */
}

__attribute__((noinline)) unsigned mix(unsigned x) {
  if (x & 0x001u)
    sink = 0;
  if (x & 0x002u)
    sink = 1;
  if (x & 0x004u)
    sink = 2;
  if (x & 0x008u)
    sink = 3;
  if (x & 0x010u)
    sink = 4;
  if (x & 0x020u)
    sink = 5;
  if (x & 0x040u)
    sink = 6;
  if (x & 0x080u)
    sink = 7;
  if (x & 0x100u)
    sink = 8;
  if (x & 0x200u)
    sink = 9;
  if (x & 0x400u)
    sink = 10;
  if (x & 0x800u)
    sink = 11;
  return x * 2654435761u + 1;
}

__attribute__((noinline)) int shout(const char *s) {
  int n = 0;
  for (; *s; s++)
    if (*s >= 'A' && *s <= 'Z')
      n++; /* @capital */
  return n;
}

int main(int argc, char **argv) {
  const char *text = argc > 1 ? argv[1] : "hello world 42";
  int counts[5] = {0, 0, 0, 0, 0};
  unsigned h = 0;
  for (int i = 0; text[i]; i++) {
    int k = classify((unsigned char)text[i]);
    counts[k]++;
    switch (k) {
    case 1:
      h = h * 31 + (unsigned)text[i]; /* @fold */
      break;
    case 2:
      h ^= (unsigned)text[i] << 3; /* @xor */
      break;
    case 3:
      h += (unsigned)(text[i] - '0'); /* @add */
      break;
    default:
      h = mix(h); /* @mix */
      break;
    }
  }
  if (counts[2] > 0)
    printf("shout %d\n", shout(text));
  printf("%d %d %d %d %d %u\n", counts[0], counts[1], counts[2], counts[3], counts[4], h);
  return 0;
}
