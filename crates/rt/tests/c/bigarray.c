/* A function with a 2^20-entry path array (8 MiB, mostly never touched), as a
 * large function counted in an array gets: counts on far-apart pages, two
 * dumps. The dumper reads only touched pages and must still find them all. */
#define MANUAL_REGISTER
#include "pathprof_test.h"
static uint64_t big[1 << 20];
static struct PpFunction big_fns[] = {
    {0x4444, 0, 0, 0, 1, 0, 1 << 20, big},
};
static struct PpModule big_module = {PP_ABI, 2, BUILD, 1, big_fns, 0};
int main(void) {
    __pathprof_register(&big_module);
    inc(&big[0]);
    inc(&big[300000]);
    inc(&big[300000]);
    __pathprof_dump();
    inc(&big[300000]);
    inc(&big[(1 << 20) - 1]);
    inc(&big[700001]);
    return 0;
}
