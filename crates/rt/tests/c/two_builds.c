/* A second module of another build (as a shared library would register),
 * registered after the program's own. */
#define MANUAL_REGISTER
#include "pathprof_test.h"
static uint64_t other_slots[2];
static struct PpFunction other_fns[] = {{0x4444, 0, 2, other_slots, 0, 0, 0, 0}};
static struct PpModule other = {PP_ABI, 0, 0x00C0FFEE00000002ull, 1, other_fns, 0};
__attribute__((constructor)) static void reg_both(void) {
    __pathprof_register(&module);
    __pathprof_register(&other);
    __pathprof_register(&module); /* twice: ignored */
}
int main(void) {
    work(4);
    inc(&other_slots[1]);
    return 0;
}
