/* libcounter.so, linked into host: its version script exports only bump. */
static int hits;

static int twice(int x) { return 2 * x; }

int bump(int x) {
  hits++;
  if (x % 2)
    return twice(x) + hits;
  return hits;
}
