/* The xz workload of bench/overhead.py: compress a deterministic text of
   argv[1] bytes once with liblzma's preset 1 and decompress it argv[2] times
   (LZMA2 decoding, lzma_decode, is what runs most), checking every round
   trip and printing the compressed size and the text's CRC-32 and CRC-64.
   liblzma comes from the lzma-sys crate's xz 5.2 sources. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lzma.h"

static uint8_t *text(size_t size) {
  static const char *words[] = {"path", "edge", "block", "profile", "count", "chord",
                                "tree", "loop", "acyclic", "increment", "register",
                                "hash", "array", "spanning", "backedge", "dummy"};
  uint8_t *out = malloc(size);
  size_t n = 0;
  unsigned long x = 12345;
  while (n < size) {
    x = (x * 1103515245 + 12345) & 0xFFFFFFFFul;
    char number[16];
    const char *w = words[(x >> 16) % 16];
    if ((x >> 4) % 7 == 0) {
      snprintf(number, sizeof number, "%lu", (x >> 9) % 100000);
      w = number;
    }
    for (; *w && n < size; w++) out[n++] = (uint8_t)*w;
    if (n < size) out[n++] = (x >> 8) % 13 == 0 ? '\n' : ' ';
  }
  return out;
}

int main(int argc, char **argv) {
  size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  int rounds = argc > 2 ? atoi(argv[2]) : 10;
  uint8_t *in = text(size);
  size_t bound = lzma_stream_buffer_bound(size), packed_size = 0;
  uint8_t *packed = malloc(bound), *back = malloc(size);
  if (lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, in, size, packed, &packed_size, bound) !=
      LZMA_OK) {
    fprintf(stderr, "compression failed\n");
    return 1;
  }
  printf("crc32 %08" PRIx32 " crc64 %016" PRIx64 ", %zu -> %zu bytes\n", lzma_crc32(in, size, 0),
         lzma_crc64(in, size, 0), size, packed_size);
  for (int r = 0; r < rounds; r++) {
    uint64_t memlimit = UINT64_MAX;
    size_t in_pos = 0, out_pos = 0;
    if (lzma_stream_buffer_decode(&memlimit, 0, NULL, packed, &in_pos, packed_size, back, &out_pos,
                                  size) != LZMA_OK ||
        out_pos != size || memcmp(in, back, size) != 0) {
      fprintf(stderr, "round %d: decompression failed\n", r);
      return 1;
    }
  }
  printf("%d round trips\n", rounds);
  free(in);
  free(packed);
  free(back);
  return 0;
}
