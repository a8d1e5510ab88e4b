/* Inlined everywhere at -O2: still a function of its own in the reports. */
static inline int clamp(int v, int hi) {
  if (v > hi)
    return hi;
  return v;
}
