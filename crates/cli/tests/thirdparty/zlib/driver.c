/* The zlib workload of bench/overhead.py: deflate a deterministic text of
   argv[1] bytes at levels 1, 6 and 9, inflate each result back and check it,
   printing each level's compressed size and the text's Adler-32 and CRC-32.
   zlib itself (deflate, trees, inflate) comes from the libz-sys crate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "zlib.h"

static unsigned char *text(unsigned long size) {
  static const char *words[] = {"path", "edge", "block", "profile",
                                "count", "chord", "tree", "loop"};
  unsigned char *out = malloc(size);
  unsigned long n = 0, x = 12345;
  while (n < size) {
    x = (x * 1103515245 + 12345) & 0xFFFFFFFFul;
    const char *w = words[(x >> 16) % 8];
    for (; *w && n < size; w++) out[n++] = (unsigned char)*w;
    if (n < size) out[n++] = (x >> 8) % 13 == 0 ? '\n' : ' ';
  }
  return out;
}

int main(int argc, char **argv) {
  unsigned long size = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  unsigned char *in = text(size);
  uLongf bound = compressBound(size);
  unsigned char *packed = malloc(bound), *back = malloc(size);
  printf("adler32 %08lx crc32 %08lx\n", adler32(1, in, size), crc32(0, in, size));
  static const int levels[] = {1, 6, 9};
  for (int i = 0; i < 3; i++) {
    uLongf packed_size = bound, back_size = size;
    if (compress2(packed, &packed_size, in, size, levels[i]) != Z_OK ||
        uncompress(back, &back_size, packed, packed_size) != Z_OK ||
        back_size != size || memcmp(in, back, size) != 0) {
      fprintf(stderr, "level %d: round trip failed\n", levels[i]);
      return 1;
    }
    printf("level %d: %lu -> %lu bytes\n", levels[i], size, (unsigned long)packed_size);
  }
  free(in);
  free(packed);
  free(back);
  return 0;
}
