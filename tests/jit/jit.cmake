# JIT vs interpreter on generated programs (tests/diff/gen.h). Bounded for CI; the same binary
# runs millions with --count (see the JIT section of the helper report / docs).
set(NCCLBPF_JIT_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
ncclbpf_test(jit_diff
  SOURCES ${NCCLBPF_JIT_TEST_DIR}/jit_diff.c ${NCCLBPF_GEN_SOURCES}
  ARGS --count 20000 --seed 20261202
  ASAN_ARGS --count 3000 --seed 5
  LABELS jit TIMEOUT 120)
