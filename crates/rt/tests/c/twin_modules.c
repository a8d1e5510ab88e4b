/* Two modules of one build in one process (the same translation unit linked
 * into two objects): each has its own counters for the same functions; the
 * runtime adds them into one section of the profile. With an argument, a
 * dump in the middle and as much again after it. */
#define MANUAL_REGISTER
#include "pathprof_test.h"
static uint64_t t_slots0[3];
static uint64_t t_paths0[4];
static uint64_t t_slots2[2];
static uint64_t t_slots5[1];
static struct PpHashState t_hs5;
static struct PpFunction t_fns[] = {
    {0x1111, 0, 3, t_slots0, 1, 0, 4, t_paths0},
    {0x2222, 5, 1, t_slots5, 2, 0, 1000, t_hs5.words},
    {0x3333, 2, 2, t_slots2, 0, 0, 0, 0},
};
static struct PpModule twin = {PP_ABI, 2, BUILD, 3, t_fns, 0};
__attribute__((constructor)) static void reg_both(void) {
    __pathprof_register(&module);
    __pathprof_register(&twin);
}
static void twin_work(void) {
    for (int i = 0; i < 3; i++) inc(&t_slots0[0]);
    __pathprof_hash_count(t_hs5.words, 100);
    __pathprof_hash_count(t_hs5.words, 100);
}
int main(int argc, char **argv) {
    (void)argv;
    work(4);
    twin_work();
    if (argc > 1) {
        __pathprof_dump();
        work(4);
        twin_work();
    }
    return 0;
}
