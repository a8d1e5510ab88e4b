/* A threaded SQL workload on SQLite's amalgamation (from the libsqlite3-sys
 * crate's bundled sources, fetched by cargo, never copied here): T threads
 * (argv[2], default 4) each run crates/cli/tests/thirdparty/sqlite/driver.c's statements on a
 * database of their own of N rows (argv[1], default 20000), at the same
 * time, through the same SQLite code (built thread-safe, SQLite's default).
 * Each thread hashes the rows its queries return; the hashes are printed in
 * thread order, so the output does not depend on the scheduling. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "sqlite3.h"
#include "workload.h"

#define MAX_THREADS 64

struct job {
    int rows;
    int ok;
    uint64_t hash;
};

static int hash_row(void *p, int n, char **values, char **names) {
    (void)names;
    struct job *job = p;
    for (int i = 0; i < n; i++)
        for (const char *c = values[i] ? values[i] : "NULL"; ; c++) {
            job->hash = (job->hash ^ (unsigned char)*c) * 0x100000001b3ull;
            if (!*c)
                break;
        }
    return 0;
}

static void *run(void *p) {
    struct job *job = p;
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return NULL;
    char *sql = sqlite3_mprintf(
        WORKLOAD_SQL,
        job->rows, job->rows);
    job->hash = 0xcbf29ce484222325ull;
    job->ok = sqlite3_exec(db, sql, hash_row, job, NULL) == SQLITE_OK;
    sqlite3_free(sql);
    sqlite3_close(db);
    return NULL;
}

int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 20000;
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    if (threads < 1 || threads > MAX_THREADS)
        return 2;
    pthread_t th[MAX_THREADS];
    struct job jobs[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        jobs[t] = (struct job){rows + t, 0, 0};
        if (pthread_create(&th[t], NULL, run, &jobs[t]) != 0)
            return 1;
    }
    int ok = 1;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        ok &= jobs[t].ok;
        printf("thread %d: %016llx\n", t, (unsigned long long)jobs[t].hash);
    }
    return ok ? 0 : 1;
}
