/* The program: calls into libcounter.so (linked) and libplugin.so (dlopen),
 * then ends in the way argv[1] names:
 *   exit K       bump K times, then _exit(0) (no exit handlers, no destructors)
 *   abort K      bump K times, then abort()
 *   term K       bump K times, then raise(SIGTERM)
 *   exec K       bump K times, then execv("/bin/true")
 *   fork K M     bump K times, fork; the child bumps M times and _exits, the
 *                parent waits and returns from main
 *   usr1 K M [kill]  bump K times, raise(SIGUSR1), bump M times, then return
 *                from main (or, with "kill", die by SIGKILL: nothing written
 *                after the SIGUSR1 dump)
 *   dlopen K M PLUGIN  dlopen PLUGIN, plug K times, dlclose; dlopen it again,
 *                plug M times, then _exit(0) with it still loaded */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int bump(int x);

static int bumps(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += bump(i);
  return s;
}

static int plugs(const char *path, int n, int close) {
  void *h = dlopen(path, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(2);
  }
  int (*plug)(int) = (int (*)(int))dlsym(h, "plug");
  int s = 0;
  for (int i = 0; i < n; i++)
    s += plug(i);
  if (close)
    dlclose(h);
  return s;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  const char *how = argv[1];
  int k = atoi(argv[2]);
  int m = argc > 3 ? atoi(argv[3]) : 0;
  if (strcmp(how, "dlopen") == 0) {
    if (argc < 5)
      return 2;
    plugs(argv[4], k, 1);
    plugs(argv[4], m, 0);
    _exit(0);
  }
  volatile int s = bumps(k);
  if (strcmp(how, "exit") == 0)
    _exit(0);
  if (strcmp(how, "abort") == 0)
    abort();
  if (strcmp(how, "term") == 0)
    raise(SIGTERM);
  if (strcmp(how, "exec") == 0) {
    char *args[] = {"true", NULL};
    execv("/bin/true", args);
    return 3;
  }
  if (strcmp(how, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      bumps(m);
      _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 4;
  }
  if (strcmp(how, "usr1") == 0) {
    raise(SIGUSR1);
    s += bumps(m);
    if (argc > 4 && strcmp(argv[4], "kill") == 0)
      raise(SIGKILL);
    return 0;
  }
  return s == -1 ? 1 : 5;
}
