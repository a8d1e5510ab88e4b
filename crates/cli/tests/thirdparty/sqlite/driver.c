/* A small SQL workload on SQLite's amalgamation (from the libsqlite3-sys crate's
 * bundled sources, fetched by cargo, never copied here): builds a table of N rows
 * (argv[1], default 20000), indexes it, queries, updates, aggregates, deletes,
 * and prints the results. */
#include <stdio.h>
#include <stdlib.h>
#include "sqlite3.h"
#include "workload.h"

static int print_row(void *unused, int n, char **values, char **names) {
    (void)unused;
    (void)names;
    for (int i = 0; i < n; i++)
        printf("%s%s", i ? "|" : "", values[i] ? values[i] : "NULL");
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 20000;
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return 1;
    char *sql = sqlite3_mprintf(
        WORKLOAD_SQL,
        rows, rows);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, print_row, NULL, &err);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "%s\n", err);
        sqlite3_free(err);
        return 1;
    }
    sqlite3_close(db);
    return 0;
}
