# Verifier tests: the rule table (rejected programs with their messages, accepted programs run
# in the bounds-checking interpreter), unit tests of the abstract domains, soundness and kernel
# differential runs over generated programs.
ncclbpf_test(test_verifier_table
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_verifier_table.c
  LABELS verifier TIMEOUT 120)
target_include_directories(test_verifier_table PRIVATE ${CMAKE_CURRENT_LIST_DIR})
if(TARGET test_verifier_table_asan)
  target_include_directories(test_verifier_table_asan PRIVATE ${CMAKE_CURRENT_LIST_DIR})
endif()

# Soundness (and, with --kernel, the Linux differential) over generated and mutated programs.
# CI runs a bounded count; long runs: build/tests/verifier_soundness --count 1000000 [--kernel].
if(TARGET ncclbpf_testgen)
  ncclbpf_test(verifier_soundness
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/verifier_soundness.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 20000 --seed 1 ASAN_ARGS --count 3000 --seed 77 LABELS verifier TIMEOUT 120)
  target_include_directories(verifier_soundness PRIVATE ${NCCLBPF_DIFF_DIR})
  if(TARGET verifier_soundness_asan)
    target_include_directories(verifier_soundness_asan PRIVATE ${NCCLBPF_DIFF_DIR})
  endif()
  ncclbpf_test(verifier_kernel_diff
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/verifier_soundness.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 3000 --seed 5 --kernel NO_SANITIZE LABELS verifier kernel TIMEOUT 120)
  target_include_directories(verifier_kernel_diff PRIVATE ${NCCLBPF_DIFF_DIR})
endif()
