// Negative control of check.sh: what the library's tables avoid, a table computed at start-up
// with libm. Its object must fail checks 1 (cosf is referenced) and 3 (the table sits in .bss and
// is filled by a dynamic initializer in .init_array), showing that those checks can fail.
#include <cmath>

namespace {
struct runtime_table {
  float cos[64];
  runtime_table() {
    for (int i = 0; i < 64; ++i) cos[i] = std::cos(static_cast<float>(i) * 0.5f);
  }
};
const runtime_table table_at_startup;
}  // namespace

extern "C" const float* posenc_fs_negative_table(void) {
  return table_at_startup.cos;
}
