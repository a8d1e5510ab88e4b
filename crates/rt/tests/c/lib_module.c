/* A shared library that is an instrumented module of its own (build
 * LIB_BUILD), as `pathprof cc -shared` makes one: it links the runtime,
 * registers from its constructor and writes its last counts from its
 * destructor (at exit, or at dlclose). */
#define MANUAL_REGISTER
#include "pathprof_test.h"
void __pathprof_fini(const struct PpModule *m);
__attribute__((constructor)) static void lib_register(void) {
    __pathprof_register(&module);
}
__attribute__((destructor)) static void lib_fini(void) {
    __pathprof_fini(&module);
}
void lib_work(long n) {
    work(n);
}
