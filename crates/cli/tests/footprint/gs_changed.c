/* Counts, then sets its own GS base (where an x86-64 executable's probes
 * count) to 0 and counts again: the runtime's dump at exit must say that
 * the base was changed (the counts since went to the counters themselves,
 * which the dump reads too). Prints "no fsgsbase" and exits 0 without
 * touching the base where the CPU or kernel does not allow wrgsbase. */
#include <stdio.h>
#include <sys/auxv.h>

static long work(long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        if (i % 3) s += i;
    return s;
}

int main(void) {
    long s = work(10);
    if (!(getauxval(AT_HWCAP2) & 2)) {
        printf("no fsgsbase\n");
        return 0;
    }
    __asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0xae, 0xd8" : : "a"(0UL) : "memory");
    s += work(5);
    printf("%ld\n", s);
    return 0;
}
