/* A fake pathprof runtime for pathprof-llvm's tests (the real one is
 * crates/rt). It keeps the registered PpModules and, at exit, prints every
 * counter to stderr in a line format the tests parse:
 *
 *   pp-module <abi_version> <mode> <build_id hex> <num_functions>
 *   pp-function <index> <hash hex> <path_kind> <num_paths> slots <c0> <c1> ...
 *   pp-paths <index> <id>:<count> ...          (nonzero counts, array or hash)
 *   pp-error <text>                            (an ABI violation)
 *
 * Hash counts are undone like the real runtime's; its entries are laid out
 * like the real runtime's, for the instrumented code's inline cache. Tests of
 * early-termination probes call fake_rt_set_counters() from the program to
 * overwrite every counter, as a fork child's reset (0) or saturation would.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct PpFunction {
  uint64_t hash;
  uint32_t index;
  uint32_t num_slots;
  uint64_t *slots;
  uint32_t path_kind;
  uint32_t reserved;
  uint64_t num_paths;
  uint64_t *paths;
};
struct PpModule {
  uint32_t abi_version;
  uint32_t mode;
  uint64_t build_id;
  uint64_t num_functions;
  const struct PpFunction *functions;
  int64_t *(*thread_delta)(void); /* a single-threaded test program counts */
                                   /* at the counters themselves (delta 0) */
  uint64_t *slots;                 /* every function's slots */
  uint64_t num_slots;
  uint64_t segment;                /* 1: slots and path arrays through %gs, */
                                   /* GS base 0 here: the counters themselves */
};
_Static_assert(sizeof(struct PpFunction) == 48, "PpFunction is 48 bytes");
_Static_assert(sizeof(struct PpModule) == 64, "PpModule is 64 bytes");

#define MAX_MODULES 8
#define MAX_HASHED 65536

static const struct PpModule *modules[MAX_MODULES];
static int num_modules;
/* An entry as the real runtime lays it out for the inline cache (docs/formats.md
 * §2): the key (id + 1) first, the count second. */
static struct {
  uint64_t key;
  uint64_t count;
  uint64_t *state;
} hashed[MAX_HASHED];
static int num_hashed;

/* Where counter *p of mod is counted: at p (the test program's one thread
 * counts at the counters themselves: delta 0, thread base the array). */
static uint64_t *at(const struct PpModule *mod, uint64_t *p) {
  (void)mod;
  return p;
}

/* What counter *p of mod counted. */
static uint64_t count(const struct PpModule *mod, uint64_t *p) { return *at(mod, p); }

static void print_function(const struct PpModule *mod, const struct PpFunction *f) {
  fprintf(stderr, "pp-function %u %016llx %u %llu slots", f->index,
          (unsigned long long)f->hash, f->path_kind,
          (unsigned long long)f->num_paths);
  if (f->num_slots != 0 && f->slots == NULL)
    fprintf(stderr, "\npp-error function %u has slots but no slot array", f->index);
  if (mod->slots != NULL && f->num_slots != 0 && (f->slots < mod->slots || f->slots >= mod->slots + mod->num_slots))
    fprintf(stderr, "\npp-error function %u's slots are outside the module's array", f->index);
  for (uint32_t k = 0; k < f->num_slots; k++)
    fprintf(stderr, " %llu", (unsigned long long)count(mod, &f->slots[k]));
  fprintf(stderr, "\n");
  if (f->reserved != 0)
    fprintf(stderr, "pp-error function %u: reserved is %u\n", f->index, f->reserved);
  if (f->path_kind == 0 && (f->paths != NULL || f->num_paths != 0))
    fprintf(stderr, "pp-error function %u: kind 0 with paths\n", f->index);
  if (f->path_kind != 0 && f->paths == NULL)
    fprintf(stderr, "pp-error function %u: no path counters\n", f->index);
  if (f->path_kind == 1) {
    fprintf(stderr, "pp-paths %u", f->index);
    for (uint64_t id = 0; id < f->num_paths; id++)
      if (count(mod, &f->paths[id]) != 0)
        fprintf(stderr, " %llu:%llu", (unsigned long long)id,
                (unsigned long long)count(mod, &f->paths[id]));
    fprintf(stderr, "\n");
  } else if (f->path_kind == 2) {
    for (int w = 0; w < 8; w++)
      if (f->paths[w] != 0)
        fprintf(stderr, "pp-error function %u: hash state word %d is not zero\n", f->index, w);
    fprintf(stderr, "pp-paths %u", f->index);
    for (int i = 0; i < num_hashed; i++)
      if (hashed[i].state == f->paths && hashed[i].count != 0)
        fprintf(stderr, " %llu:%llu", (unsigned long long)(hashed[i].key - 1),
                (unsigned long long)hashed[i].count);
    fprintf(stderr, "\n");
  }
}

static void print_all(void) {
  for (int m = 0; m < num_modules; m++) {
    const struct PpModule *mod = modules[m];
    fprintf(stderr, "pp-module %u %u %016llx %llu\n", mod->abi_version, mod->mode,
            (unsigned long long)mod->build_id,
            (unsigned long long)mod->num_functions);
    for (uint64_t i = 0; i < mod->num_functions; i++)
      print_function(mod, &mod->functions[i]);
  }
}

void __pathprof_register(const struct PpModule *m) {
  if (num_modules == 0)
    atexit(print_all);
  if (num_modules < MAX_MODULES)
    modules[num_modules++] = m;
  else
    fprintf(stderr, "pp-error too many modules\n");
}

/* The module's destructor (after atexit handlers): the counts were printed
 * at exit already; a module that was never registered is an error. */
void __pathprof_fini(const struct PpModule *m) {
  for (int i = 0; i < num_modules; i++)
    if (modules[i] == m)
      return;
  fprintf(stderr, "pp-error fini of a module never registered\n");
}

/* The entry of (state, id), created with count 0; NULL when full. */
static uint64_t *entry(uint64_t *state, uint64_t id) {
  for (int i = 0; i < num_hashed; i++)
    if (hashed[i].state == state && hashed[i].key == id + 1)
      return &hashed[i].key;
  if (num_hashed == MAX_HASHED) {
    fprintf(stderr, "pp-error hash table full\n");
    return NULL;
  }
  hashed[num_hashed].state = state;
  hashed[num_hashed].key = id + 1;
  hashed[num_hashed].count = 0;
  return &hashed[num_hashed++].key;
}

void __pathprof_hash_count(uint64_t *state, uint64_t id) {
  uint64_t *e = entry(state, id);
  if (e != NULL && e[1] != UINT64_MAX)
    e[1]++;
}

/* The inline cache's miss: counts and leaves the entry's address less the
 * cache's base word's in the slot. The base word follows the 8 state words
 * and stays 0; the HASH_CACHE_SLOTS cache words follow it (the harness
 * passes pathprof_format::abi's). */
void __pathprof_hash_count_cached(uint64_t *state, uint64_t *slot, uint64_t id) {
  uint64_t *base = state + 8;
  if (slot <= base || slot > base + HASH_CACHE_SLOTS)
    fprintf(stderr, "pp-error cache slot outside the hash state's cache\n");
  if (*base != 0)
    fprintf(stderr, "pp-error the cache's base word is not 0\n");
  __pathprof_hash_count(state, id);
  *slot = (uint64_t)(uintptr_t)entry(state, id) - (uint64_t)(uintptr_t)base;
}

/* The fake runtime is single-threaded: atomic counting is the same. */
void __pathprof_hash_count_cached_atomic(uint64_t *state, uint64_t *slot, uint64_t id) {
  __pathprof_hash_count_cached(state, slot, id);
}

/* Undoes one count: never below 0, never from UINT64_MAX; unknown ids stay
 * unknown. */
void __pathprof_hash_uncount(uint64_t *state, uint64_t id) {
  for (int i = 0; i < num_hashed; i++) {
    if (hashed[i].state == state && hashed[i].key == id + 1) {
      if (hashed[i].count != 0 && hashed[i].count != UINT64_MAX)
        hashed[i].count--;
      return;
    }
  }
}

void __pathprof_dump(void) { print_all(); }

/* Sets every slot, array path and hash path counter of every module. */
void fake_rt_set_counters(uint64_t value) {
  for (int m = 0; m < num_modules; m++) {
    const struct PpModule *mod = modules[m];
    for (uint64_t i = 0; i < mod->num_functions; i++) {
      const struct PpFunction *f = &mod->functions[i];
      for (uint32_t k = 0; k < f->num_slots; k++) {
        f->slots[k] = 0;
        *at(mod, &f->slots[k]) = value;
      }
      if (f->path_kind == 1)
        for (uint64_t id = 0; id < f->num_paths; id++) {
          f->paths[id] = 0;
          *at(mod, &f->paths[id]) = value;
        }
    }
  }
  for (int i = 0; i < num_hashed; i++)
    hashed[i].count = value;
}
