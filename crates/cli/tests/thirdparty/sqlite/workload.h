/* The SQL workload of crates/cli/tests/thirdparty/sqlite/driver.c and threads.c: a printf format
 * for sqlite3_mprintf taking the row count twice. Builds a table of N rows,
 * indexes it, queries, updates, aggregates, deletes. */
#define WORKLOAD_SQL \
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);" \
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x<%d)" \
    "  INSERT INTO t SELECT x, printf('row%%06d', x*7919 %% %d), x*0.5 FROM n;" \
    "CREATE INDEX tb ON t(b);" \
    "SELECT count(*), sum(c), min(b), max(b) FROM t;" \
    "SELECT b FROM t WHERE b LIKE 'row01%%' ORDER BY b DESC LIMIT 3;" \
    "UPDATE t SET c = c * 2 WHERE a %% 3 = 0;" \
    "SELECT a %% 7, count(*), round(avg(c), 2) FROM t GROUP BY a %% 7 ORDER BY 1;" \
    "DELETE FROM t WHERE a %% 5 = 0;" \
    "SELECT count(*), group_concat(substr(b, 4, 2), '') FROM (SELECT b FROM t ORDER BY c LIMIT 20);"
