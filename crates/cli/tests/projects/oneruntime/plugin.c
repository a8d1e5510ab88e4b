/* libplugin.so, loaded by host with dlopen (not linked). */
int plug(int x) {
  if (x > 2)
    return x - 2;
  return x;
}
