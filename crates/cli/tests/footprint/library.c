/* One library of many (built with -DID=n): `fID`, 2^8 paths, and `run`,
 * which the host calls by name. */
#define CAT(a, b) a##b
#define NAME(id) CAT(f, id)

int NAME(ID)(int x) {
    int s = 0;
    if (x & 1) s += 1; else s -= 1;
    if (x & 2) s += 2; else s -= 2;
    if (x & 4) s += 3; else s -= 3;
    if (x & 8) s += 4; else s -= 4;
    if (x & 16) s += 5; else s -= 5;
    if (x & 32) s += 6; else s -= 6;
    if (x & 64) s += 7; else s -= 7;
    if (x & 128) s += 8; else s -= 8;
    return s;
}

int run(int n) {
    int s = 0;
    for (int x = 0; x < n; x++) s += NAME(ID)(x);
    return s;
}
