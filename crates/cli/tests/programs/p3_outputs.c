/* p3_outputs.c: a program that asks what its standard input, output and
 * error are (tests/cli/p3.rs), as xz does (it reads and writes a pipe
 * otherwise than a file, and shows progress on a terminal). How many rounds
 * it makes, and which branch each round takes, depend on whether each is a
 * regular file, a pipe, a terminal or something else; what it prints does
 * not (it reads its input and prints its length). So copies of a P3 build
 * given streams of different kinds print the same and count differently:
 * `pathprof p3 run` gives every copy regular files for its output and error
 * and, when its own input is a file, that file, and the merged profile is
 * the profile of the program run with `< file > file 2> file`.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1: regular file, 2: pipe, 3: terminal, 4: anything else. */
static int kind(int fd) {
  struct stat st;
  if (isatty(fd))
    return 3;
  if (fstat(fd, &st) != 0)
    return 4;
  if (S_ISREG(st.st_mode))
    return 1;
  if (S_ISFIFO(st.st_mode))
    return 2;
  return 4;
}

static long round_of(int i, int out, int err) {
  long v = i;
  if (out == 1)
    v += 3;
  else if (out == 2)
    v -= 5;
  else
    v ^= 7;
  if (err == 1)
    v *= 2;
  else
    v /= 2;
  return v;
}

int main(void) {
  int in = kind(0), out = kind(1), err = kind(2);
  long sum = 0, bytes = 0;
  int rounds = 100 * in + 10 * out + err;
  for (int i = 0; i < rounds; i++)
    sum += round_of(i, out, err) & 1;
  while (getchar() != EOF)
    bytes++;
  printf("rounds made: %s; %ld bytes read\n", sum >= 0 ? "some" : "none", bytes);
  fprintf(stderr, "done\n");
  return 0;
}
