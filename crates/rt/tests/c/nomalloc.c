/* Counts calls of the malloc family around a SIGUSR1 dump: the dump path
 * must not allocate (the program could hold malloc's lock). */
#include "pathprof_test.h"
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static volatile long allocations;
void *malloc(size_t n) { allocations++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { allocations++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { allocations++; return __libc_realloc(p, n); }
void *aligned_alloc(size_t a, size_t n) { allocations++; return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { allocations++; return __libc_memalign(a, n); }
int posix_memalign(void **p, size_t a, size_t n) {
    allocations++;
    *p = __libc_memalign(a, n);
    return *p ? 0 : 12;
}
void free(void *p) { __libc_free(p); }

int main(void) {
    /* Registration (in a constructor) allocated: the interposition works. */
    long at_start = allocations;
    work(100);
    printf("ready %s\n", at_start > 0 ? "counting" : "not-counting");
    fflush(stdout);
    long before = allocations;
    char c;
    if (read(0, &c, 1) != 1) return 1;
    long after = allocations;
    printf("%ld\n", after - before);
    return 0;
}
