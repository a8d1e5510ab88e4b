/* thread_stacks.c: threads with the smallest stack the C library allows,
 * in a program whose counters are big (a 1024-way switch: some 8 KB of
 * block counters, 4 KB in edge mode, which the C library puts in every
 * thread's stack when they are thread-local), and a destructor of the
 * program's own thread-specific key that runs instrumented code as each
 * thread ends.
 *
 *   step(s, n): each of 3 threads calls big(i) for i in 0..2047: 2048 calls
 *               of step per thread, 6144 in all; main calls it for none.
 *   farewell(): the key's destructor calls it 5 times per thread: 15.
 * Output: the threads' sums; exit status 0. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 3

__attribute__((noinline)) long step(long s, long n) { return s * 3 + n; }

#define C1(n) case n: s = step(s, n); break;
#define C4(n) C1(n) C1(n + 1) C1(n + 2) C1(n + 3)
#define C16(n) C4(n) C4(n + 4) C4(n + 8) C4(n + 12)
#define C64(n) C16(n) C16(n + 16) C16(n + 32) C16(n + 48)
#define C256(n) C64(n) C64(n + 64) C64(n + 128) C64(n + 192)

__attribute__((noinline)) long big(long x) {
  long s = x;
  switch (x % 1024) {
    C256(0) C256(256) C256(512) C256(768)
  }
  return s;
}

static long farewells;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void farewell(void) {
  pthread_mutex_lock(&lock);
  farewells++;
  pthread_mutex_unlock(&lock);
}

static pthread_key_t key;

static void destructor(void *p) {
  (void)p;
  for (int i = 0; i < 5; i++)
    farewell();
}

static long sums[THREADS];

static void *worker(void *arg) {
  long t = (long)arg, s = 0;
  pthread_setspecific(key, arg == NULL ? &sums[0] : arg);
  for (long i = 0; i < 2048; i++)
    s += big(i + t) % 1000;
  sums[t] = s;
  return NULL;
}

int main(void) {
  if (pthread_key_create(&key, destructor) != 0)
    return 1;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) != 0)
    return 2;
  pthread_t th[THREADS];
  for (long t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], &attr, worker, (void *)t) != 0) {
      printf("pthread_create failed\n");
      return 3;
    }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  printf("sums %ld %ld %ld farewells %ld\n", sums[0], sums[1], sums[2], farewells);
  return 0;
}
