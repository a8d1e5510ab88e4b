/* One of many processes writing one profile at once: work(100), hash path
 * 1000 + argv[1] once (which processes landed is visible in the file), then
 * exit. */
#include "pathprof_test.h"
int main(int argc, char **argv) {
    work(100);
    __pathprof_hash_count(hs5.words, 1000 + (uint64_t)arg(argc, argv, 1, 0));
    return 0;
}
