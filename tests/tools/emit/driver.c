/* Runs the rotation of a header from `posenc emit` (included as "emitted.h", name prefix "emt")
 * on inputs from a file and prints the bits of the results, for tests/tools/emit/emit.cpp.
 * Compiles as C99 (against `emit --lang c`) and as C++20 (against `emit --lang cpp`).
 *
 * Input file (whitespace-separated):
 *   mode tokens heads        mode 0: emt_apply on the whole tensor; 1: emt_apply_head per head
 *   positions[tokens]        decimal
 *   x[tokens * heads * head_dim]   float bits, hexadecimal
 * Output: "meta MAX_POS HEAD_DIM ROTARY_DIM", "null RC1 RC2" (both functions given null
 * pointers), "rc RC" (the first non-zero return, else 0), then the bits of x afterwards.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emitted.h"

#ifdef __cplusplus
#define E_HEAD_DIM emt::head_dim
#define E_ROTARY_DIM emt::rotary_dim
#define E_MAX_POS emt::max_pos
#define E_APPLY emt::apply
#define E_APPLY_HEAD emt::apply_head
#define E_NULLPTR nullptr
#else
#define E_HEAD_DIM EMT_HEAD_DIM
#define E_ROTARY_DIM EMT_ROTARY_DIM
#define E_MAX_POS EMT_MAX_POS
#define E_APPLY emt_apply
#define E_APPLY_HEAD emt_apply_head
#define E_NULLPTR NULL
#endif

int main(int argc, char** argv) {
  FILE* f;
  int mode, rc = 0;
  unsigned long tokens, heads, t, h, k, n;
  uint64_t* pos;
  float* x;
  if (argc != 2) return 2;
  f = fopen(argv[1], "r");
  if (f == NULL) return 2;
  if (fscanf(f, "%d %lu %lu", &mode, &tokens, &heads) != 3) return 3;
  n = tokens * heads * (unsigned long)E_HEAD_DIM;
  pos = (uint64_t*)malloc((tokens + 1) * sizeof *pos);
  x = (float*)malloc((n + 1) * sizeof *x);
  if (pos == NULL || x == NULL) return 4;
  for (t = 0; t < tokens; ++t) {
    unsigned long long p;
    if (fscanf(f, "%llu", &p) != 1) return 3;
    pos[t] = (uint64_t)p;
  }
  for (k = 0; k < n; ++k) {
    unsigned int bits;
    if (fscanf(f, "%x", &bits) != 1) return 3;
    memcpy(&x[k], &bits, sizeof bits);
  }
  fclose(f);

  printf("meta %lu %lu %lu\n", (unsigned long)E_MAX_POS, (unsigned long)E_HEAD_DIM,
         (unsigned long)E_ROTARY_DIM);
  printf("null %d %d\n", E_APPLY(E_NULLPTR, 1, 1, pos), E_APPLY_HEAD(E_NULLPTR, 0));
  if (mode == 0) {
    rc = E_APPLY(x, tokens, heads, pos);
  } else {
    for (t = 0; t < tokens; ++t)
      for (h = 0; h < heads; ++h) {
        const int r = E_APPLY_HEAD(x + (t * heads + h) * E_HEAD_DIM, pos[t]);
        if (rc == 0) rc = r;
      }
  }
  printf("rc %d\n", rc);
  for (k = 0; k < n; ++k) {
    unsigned int bits;
    memcpy(&bits, &x[k], sizeof bits);
    printf("%08x\n", bits);
  }
  free(pos);
  free(x);
  return 0;
}
