/* interp.c: a computed-goto interpreter (`goto *labels[op]`, an LLVM
 * `indirectbr`, whose edges cannot be split) running a fixed bytecode.
 *
 * Bytecode (pc: instruction):
 *    0: LOADC 5         counter = 5
 *    2: INC             acc += 1        <- loop 1
 *    3: DBL             acc *= 2
 *    4: DJNZ 2          if (--counter) jump back 2 (to pc 2)
 *    6: LOADC 3         counter = 3
 *    8: INC             acc += 1        <- loop 2
 *    9: DJNZ 1          if (--counter) jump back 1 (to pc 8)
 *   11: HALT            return acc
 *
 * One run: LOADC 2 times; loop 1 runs 5 times (INC, DBL, DJNZ each 5 times,
 * DJNZ jumping 4 times, falling through once); loop 2 runs 3 times (INC, DJNZ
 * each 3 times, DJNZ jumping twice, falling through once); HALT once.
 *   @loadc 2, @inc 5+3 = 8, @dbl 5, @djnz 5+3 = 8, @taken 4+2 = 6,
 *   @fall 1+1 = 2, @halt 1; dispatches (`goto *`) 2+8+5+8 = 23 plus the
 *   first one = 24 = the number of instructions run.
 * From acc = a, loop 1 gives 2(2(2(2(2(a+1)+1)+1)+1)+1) = 32a + 62 and loop 2
 * adds 3: run(code, a) = 32a + 65.
 * main runs it for a = 0, 1, 2 (3 calls): 65 + 97 + 129 = 291, so every count
 * above triples: @loadc 6, @inc 24, @dbl 15, @djnz 24, @taken 18, @fall 6,
 * @halt 3, 72 dispatches. The indirectbr's edges to the handlers run
 * loadc 6, inc 24, dbl 15, djnz 24, halt 3 times.
 * Output: "run 65 97 129\n", exit status 291 % 256 = 35.
 */
#include <stdio.h>

enum { HALT, LOADC, INC, DBL, DJNZ };

static const unsigned char program[] = {
    LOADC, 5, INC, DBL, DJNZ, 2, LOADC, 3, INC, DJNZ, 1, HALT,
};
const unsigned char *volatile code_ptr = program;

__attribute__((noinline)) long run(const unsigned char *code, long acc) {
  static void *const labels[] = {&&op_halt, &&op_loadc, &&op_inc, &&op_dbl,
                                 &&op_djnz};
  const unsigned char *pc = code;
  long counter = 0;
  goto *labels[*pc];
op_loadc:
  counter = pc[1]; /* @loadc */
  pc += 2;
  goto *labels[*pc];
op_inc:
  acc += 1; /* @inc */
  pc += 1;
  goto *labels[*pc];
op_dbl:
  acc *= 2; /* @dbl */
  pc += 1;
  goto *labels[*pc];
op_djnz:
  if (--counter != 0) /* @djnz */
    pc -= pc[1]; /* @taken */
  else
    pc += 2; /* @fall */
  goto *labels[*pc];
op_halt:
  return acc; /* @halt */
}

int main(void) {
  long r[3], sum = 0;
  for (int a = 0; a < 3; a++) {
    r[a] = run(code_ptr, a);
    sum += r[a];
  }
  printf("run %ld %ld %ld\n", r[0], r[1], r[2]);
  return (int)(sum % 256);
}
