/* work(argv[1]) in the program, lib_work(argv[2]) in the instrumented
 * shared library: linked at startup, or with argv[3] = "dlopen" loaded by
 * dlopen from argv[4] and closed again before the program ends (its own
 * destructor writes its counts then). */
#include "pathprof_test.h"
#include <dlfcn.h>
void lib_work(long n);
int main(int argc, char **argv) {
    work(arg(argc, argv, 1, 3));
    if (argc > 4 && strcmp(argv[3], "dlopen") == 0) {
        void *lib = dlopen(argv[4], RTLD_NOW);
        if (!lib) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        void (*f)(long) = (void (*)(long))dlsym(lib, "lib_work");
        f(arg(argc, argv, 2, 5));
        dlclose(lib);
        return 0;
    }
#ifndef NO_LINKED_LIB
    lib_work(arg(argc, argv, 2, 5));
#endif
    return 0;
}
