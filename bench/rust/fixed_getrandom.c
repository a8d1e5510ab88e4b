/* bench/rust.py preloads this into every run of ripgrep (LD_PRELOAD): Rust's
   HashMap seeds its hasher from getrandom(2), so without it each process
   probes its hash tables differently (ripgrep's file-type table, among
   others) and two runs of one build take different paths. With fixed
   "random" bytes every run repeats exactly, so that the path build's and
   the edge build's profiles of the workload can be compared by
   `pathprof verify`. */
#include <string.h>
#include <sys/types.h>

ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
    (void)flags;
    memset(buf, 0x5a, n);
    return (ssize_t)n;
}
