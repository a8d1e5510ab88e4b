#include <stdio.h>
static int classify(int x) {
    if (x % 3 == 0)
        return 0;
    if (x % 3 == 1)
        return 1;
    return 2;
}
static int never(int x) { return x * 2; }
int main(int argc, char **argv) {
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 10; i++)
        counts[classify(i)]++;
    if (argc > 5)
        printf("%d\n", never(argc));
    printf("%d %d %d\n", counts[0], counts[1], counts[2]);
    return 0;
}
