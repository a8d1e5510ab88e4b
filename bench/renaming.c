/* How fast a loop can increment one counter in memory, by the form of the
 * increment's address (x86-64, Linux; `clang -O2 bench/renaming.c -o
 * renaming && ./renaming`). Each loop is `incq <counter>; dec; jnz`. Where
 * the CPU forwards a store to the next load of the same address with no
 * latency (AMD Zen's memory renaming), a round takes about a cycle; where it
 * does not, a round waits for the last round's store (about five cycles).
 * On the machine the suite was tuned on (an AMD EPYC whose first-level data
 * cache cachegrind reads as 48 KB), only the addresses with a register are
 * forwarded at once (on another AMD EPYC, with a 32 KB first-level data
 * cache, every form is; bench/machine.py records these timings with every
 * results file): this is why a slot counted inside a loop is indexed by a
 * register holding zero (crates/llvm/src/instrument/emit.rs,
 * `renames_slots`), and why path ends, whose address is indexed by
 * the path id, lose the forwarding when the id changes from round to round
 * (and why a path end inside a loop counts a repeated path at an increment
 * of its own, `repeats_path_ends`: the last loop here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long counters[64];
__thread long thread_counters[64];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void absolute_thread_local(long n) {
    __asm__ volatile("1: incq %%fs:thread_counters@tpoff\n dec %0\n jnz 1b"
                     : "+r"(n)::"memory");
}

static void thread_local_indexed_by_zero(long n) {
    __asm__ volatile("xor %%r8d,%%r8d\n"
                     "1: incq %%fs:thread_counters@tpoff(,%%r8,8)\n dec %0\n jnz 1b"
                     : "+r"(n)::"r8", "memory");
}

static void rip_relative(long n) {
    __asm__ volatile("1: incq counters(%%rip)\n dec %0\n jnz 1b" : "+r"(n)::"memory");
}

/* A path end: the index is 0 in seven rounds of eight, `eighth` in the
 * eighth. */
static void index_zero_but_every_eighth_round(long n, long eighth) {
    long k = 0;
    __asm__ volatile("xor %%r8d,%%r8d\n"
                     "1: incq %%fs:thread_counters@tpoff(,%%r8,8)\n xor %%r8d,%%r8d\n"
                     " inc %1\n test $7,%1\n jnz 2f\n mov %2,%%r8\n"
                     "2: dec %0\n jnz 1b"
                     : "+&r"(n), "+&r"(k)
                     : "r"(eighth)
                     : "r8", "memory");
}

static void index_changing(long n) { index_zero_but_every_eighth_round(n, 5); }

/* The same path ends at a repeat site (emit.rs, `repeats_path_ends`): the
 * id is compared with the last one counted there (r9); the same id is
 * counted by an increment indexed by r9, another by a second increment,
 * which also makes it the last. */
static void repeat_site_every_eighth_round(long n) {
    long k = 0, eighth = 5;
    __asm__ volatile("xor %%r8d,%%r8d\n xor %%r9d,%%r9d\n"
                     "1: cmp %%r8,%%r9\n jne 3f\n"
                     " incq %%fs:thread_counters@tpoff(,%%r9,8)\n jmp 4f\n"
                     "3: incq %%fs:thread_counters@tpoff(,%%r8,8)\n mov %%r8,%%r9\n"
                     "4: xor %%r8d,%%r8d\n"
                     " inc %1\n test $7,%1\n jnz 2f\n mov %2,%%r8\n"
                     "2: dec %0\n jnz 1b"
                     : "+&r"(n), "+&r"(k)
                     : "r"(eighth)
                     : "r8", "r9", "memory");
}

static void index_never_changing(long n) { index_zero_but_every_eighth_round(n, 0); }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000000;
    struct {
        const char *name;
        void (*run)(long);
    } loops[] = {
        {"incq %fs:k (absolute, thread-local)", absolute_thread_local},
        {"incq %fs:k(,%r8,8), r8 = 0", thread_local_indexed_by_zero},
        {"incq k(%rip)", rip_relative},
        {"incq %fs:k(,%r8,8), r8 = 0 or 5 (1 in 8)", index_changing},
        {"incq %fs:k(,%r8,8), r8 = 0 (same loop)", index_never_changing},
        {"repeat site, r8 = 0 or 5 (1 in 8)", repeat_site_every_eighth_round},
    };
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++) {
        double start = now();
        loops[i].run(n);
        printf("%-42s %.3f ns a round\n", loops[i].name, (now() - start) / n * 1e9);
    }
    return 0;
}
