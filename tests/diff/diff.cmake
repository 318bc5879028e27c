# Random program generator, kernel oracle and the differential tests built on them.
# Other drivers (JIT vs interpreter, verifier soundness) compile ${NCCLBPF_DIFF_DIR}/gen.c
# (and kernel_oracle.c when they want the kernel) into their own test and include gen.h.
set(NCCLBPF_DIFF_DIR ${CMAKE_CURRENT_LIST_DIR})
# The generator (instructions, maps and helpers) and the engine maps its programs use.
set(NCCLBPF_GEN_SOURCES ${NCCLBPF_DIFF_DIR}/gen.c ${NCCLBPF_DIFF_DIR}/gen_maps.c
    ${NCCLBPF_DIFF_DIR}/gen_env.c)
set(NCCLBPF_TESTGEN_SOURCES ${NCCLBPF_GEN_SOURCES} ${NCCLBPF_DIFF_DIR}/kernel_oracle.c)

ncclbpf_test(test_gen SOURCES ${NCCLBPF_DIFF_DIR}/test_gen.c ${NCCLBPF_GEN_SOURCES}
  LABELS unit TIMEOUT 60)

if(NCCLBPF_KERNEL_TESTS)
  # Kernel oracle sanity: the kernel's verifier accepts (nearly) everything the generator makes.
  ncclbpf_test(diff_kernel_accept SOURCES ${NCCLBPF_DIFF_DIR}/kernel_accept.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 3000 --seed 1 ASAN_ARGS --count 500 --seed 7 LABELS kernel TIMEOUT 60)
  # Interpreter vs kernel, bounded for CI (~11 s on an idle 2-vCPU machine); the same binary runs millions with --count
  # (tests/diff/README.md).
  ncclbpf_test(diff_interp_kernel SOURCES ${NCCLBPF_DIFF_DIR}/diff_interp_kernel.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 30000 --seed 20261202 ASAN_ARGS --count 5000 --seed 977 LABELS kernel TIMEOUT 240)
endif()
