/* A function of more than 512 blocks (`big`: 600 cases), the functions it
 * reaches by direct calls (`mid`, then `leaf`) and one it does not
 * (`apart`): what the alias scope leaves out (instrument/scope.rs). */
static int leaf(int *x) { return *x * 3 + (*x > 5); }

static int mid(int *x) {
    int y = *x + 1;
    return leaf(&y) + 1;
}

#define CASE(n) case n: acc += mid(&x) ^ n; break;
#define TEN(n) CASE(n##0) CASE(n##1) CASE(n##2) CASE(n##3) CASE(n##4) \
               CASE(n##5) CASE(n##6) CASE(n##7) CASE(n##8) CASE(n##9)
#define HUNDRED(n) TEN(n##0) TEN(n##1) TEN(n##2) TEN(n##3) TEN(n##4) \
                   TEN(n##5) TEN(n##6) TEN(n##7) TEN(n##8) TEN(n##9)

int big(int x) {
    int acc = 0;
    switch (x) {
        HUNDRED(1) HUNDRED(2) HUNDRED(3) HUNDRED(4) HUNDRED(5) HUNDRED(6)
    }
    return acc;
}

int apart(int *p) { return *p + leaf(p); }
