/* dlopens every library named on the command line, in order, and calls the
 * i-th one's `run(i)` (i from 1); prints the sum of what they returned. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    long total = 0;
    for (int i = 1; i < argc; i++) {
        void *lib = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            fprintf(stderr, "dlopen %s: %s\n", argv[i], dlerror());
            return 1;
        }
        int (*run)(int) = (int (*)(int))dlsym(lib, "run");
        if (!run) return 2;
        total += run(i);
    }
    printf("%ld\n", total);
    return 0;
}
