/* A small word-frequency counter: the bundled example pathprof profiles.
 * Reads text on stdin, prints the ten most frequent words. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE 4096

struct entry {
    char word[32];
    int count;
};

static struct entry table[TABLE];

static unsigned hash(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void add(const char *w) {
    unsigned i = hash(w) % TABLE;
    while (table[i].count && strcmp(table[i].word, w) != 0)
        i = (i + 1) % TABLE;
    if (!table[i].count)
        strcpy(table[i].word, w);
    table[i].count++;
}

static int by_count(const void *a, const void *b) {
    const struct entry *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(x->word, y->word);
}

int main(void) {
    char w[32];
    int n = 0, c;
    while ((c = getchar()) != EOF) {
        if (isalnum(c) || c == '_') {
            if (n < 31)
                w[n++] = (char)tolower(c);
        } else if (n > 0) {
            w[n] = 0;
            add(w);
            n = 0;
        }
    }
    if (n > 0) {
        w[n] = 0;
        add(w);
    }
    qsort(table, TABLE, sizeof table[0], by_count);
    for (int i = 0; i < 10 && table[i].count; i++)
        printf("%6d %s\n", table[i].count, table[i].word);
    return 0;
}
