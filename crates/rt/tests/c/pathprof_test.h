/* The runtime ABI (docs/formats.md section 2), declared by hand, and a tiny
 * fake "instrumented module": what pathprof-llvm would emit, written in C.
 *
 * Function 0: 3 slots, array paths (4 ids).   Function 5: 1 slot, hash paths.
 * Function 2: never runs (must not appear in the profile).
 * work(n) "runs" them n times with a known pattern (see tests/c_programs.rs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/wait.h>

/* The ABI version these modules are written for (pathprof_format::abi). */
#define PP_ABI 5

struct PpFunction {
    uint64_t hash;
    uint32_t index;
    uint32_t num_slots;
    uint64_t *slots;
    uint32_t path_kind;
    uint32_t reserved;
    uint64_t num_paths;
    uint64_t *paths;
};
struct PpHashState { uint64_t words[8]; };
struct PpModule {
    uint32_t abi_version;
    uint32_t mode;
    uint64_t build_id;
    uint64_t num_functions;
    const struct PpFunction *functions;
    int64_t *(*thread_delta)(void); /* NULL: this hand-made module's counters */
                                    /* are shared by all threads */
    uint64_t *slots;                /* NULL: its functions' slots are arrays */
    uint64_t num_slots;             /* of their own, */
    uint64_t segment;                /* 0: counted at the delta */
};
_Static_assert(sizeof(struct PpModule) == 64, "PpModule is 64 bytes");
void __pathprof_register(const struct PpModule *m);
void __pathprof_hash_count(uint64_t *state, uint64_t id);
void __pathprof_hash_count_atomic(uint64_t *state, uint64_t id);
void __pathprof_hash_uncount(uint64_t *state, uint64_t id);
void __pathprof_dump(void);

_Static_assert(sizeof(struct PpFunction) == 48, "PpFunction is 48 bytes");

#ifndef BUILD
#define BUILD 0xB0B0000000000001ull
#endif

static uint64_t slots0[3];
static uint64_t paths0[4];
static uint64_t slots2[2];
static uint64_t slots5[1];
static struct PpHashState hs5;

static struct PpFunction fns[] = {
    {0x1111, 0, 3, slots0, 1, 0, 4, paths0},
    {0x2222, 5, 1, slots5, 2, 0, 1000, hs5.words},
    {0x3333, 2, 2, slots2, 0, 0, 0, 0},
};
static struct PpModule module = {PP_ABI, 2, BUILD, 3, fns, 0};

#ifndef MANUAL_REGISTER
__attribute__((constructor)) static void pathprof_test_register(void) {
    __pathprof_register(&module);
}
#endif

/* What instrumentation does: llvm.uadd.sat.i64(c, 1). */
static inline void inc(uint64_t *c) {
    if (*c != UINT64_MAX) (*c)++;
}

/* What instrumentation does to undo a count after a call returned (Call
 * sites): minus one, except at 0 and at UINT64_MAX. */
__attribute__((unused)) static inline void dec(uint64_t *c) {
    if (*c != 0 && *c != UINT64_MAX) (*c)--;
}

__attribute__((unused)) static void work(long n) {
    for (long i = 0; i < n; i++) {
        inc(&slots0[0]);
        inc(&slots0[2]);
        inc(&paths0[i % 4]);
        inc(&slots5[0]);
        __pathprof_hash_count(hs5.words, (uint64_t)(i % 10) * 100);
    }
}

__attribute__((unused)) static long arg(int argc, char **argv, int i, long dflt) {
    return argc > i ? atol(argv[i]) : dflt;
}
