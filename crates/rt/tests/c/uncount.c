/* Early-termination undos (Call sites): counts made before a "call" and taken
 * back after it, with and without a dump while the call is in progress.
 * See tests/c_programs.rs for what the file must hold. */
#include "pathprof_test.h"

/* The counts a Call probe makes before its call... */
static void before(uint64_t id) {
    inc(&slots0[1]);
    inc(&paths0[3]);
    __pathprof_hash_count(hs5.words, id);
}

/* ...and takes back when the call returns. */
static void after(uint64_t id) {
    __pathprof_hash_uncount(hs5.words, id);
    dec(&paths0[3]);
    dec(&slots0[1]);
}

int main(void) {
    /* Calls that return, with dumps around: nothing stays. */
    for (int i = 0; i < 1000; i++) {
        before(7);
        after(7);
        if (i % 100 == 0)
            __pathprof_dump();
    }
    /* An id at zero, and one never counted: left alone (no entry made). */
    __pathprof_hash_uncount(hs5.words, 7);
    __pathprof_hash_uncount(hs5.words, 999);

    work(3);
    /* A dump while calls are in progress writes their counts (id 100 was
     * counted by work(3), 42 is new)... */
    before(100);
    before(42);
    __pathprof_dump();
    after(42);
    after(100);
    /* ...and the next dump writes their undos as resumes (counts written
     * once, taken back once). */
    __pathprof_dump();
    work(2);
    __pathprof_dump();
    before(5);
    return 0; /* ends "inside" a call: its counts stay */
}
