/* A small SQL workload on SQLite's amalgamation (from the libsqlite3-sys crate's
 * bundled sources, fetched by cargo, never copied here): builds a table of N rows
 * (argv[1], default 20000), indexes it, queries, updates, aggregates, deletes,
 * and prints the results. */
#include <stdio.h>
#include <stdlib.h>
#include "sqlite3.h"

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
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x<%d)"
        "  INSERT INTO t SELECT x, printf('row%%06d', x*7919 %% %d), x*0.5 FROM n;"
        "CREATE INDEX tb ON t(b);"
        "SELECT count(*), sum(c), min(b), max(b) FROM t;"
        "SELECT b FROM t WHERE b LIKE 'row01%%' ORDER BY b DESC LIMIT 3;"
        "UPDATE t SET c = c * 2 WHERE a %% 3 = 0;"
        "SELECT a %% 7, count(*), round(avg(c), 2) FROM t GROUP BY a %% 7 ORDER BY 1;"
        "DELETE FROM t WHERE a %% 5 = 0;"
        "SELECT count(*), group_concat(substr(b, 4, 2), '') FROM (SELECT b FROM t ORDER BY c LIMIT 20);",
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
