# Our own conformance cases (tests/conformance/cases/*.case) through the real CLI binary:
# `ncclbpf exec --interp` always, `--jit` where the binary has a JIT (the runner skips visibly
# otherwise). The .asan twins run the sanitizer build of both the runner and the CLI.
set(NCCLBPF_CONF_CASES ${CMAKE_CURRENT_LIST_DIR}/cases)
ncclbpf_test(conformance_interp SOURCES ${CMAKE_CURRENT_LIST_DIR}/conformance_runner.c
  ARGS $<TARGET_FILE:ncclbpf> --interp ${NCCLBPF_CONF_CASES}
  ASAN_ARGS $<TARGET_FILE:ncclbpf_asan> --interp ${NCCLBPF_CONF_CASES}
  TIMEOUT 120 LABELS conformance)
add_test(NAME conformance_jit
  COMMAND conformance_interp $<TARGET_FILE:ncclbpf> --jit ${NCCLBPF_CONF_CASES})
set_tests_properties(conformance_jit PROPERTIES TIMEOUT 120 LABELS conformance)
if(NCCLBPF_SANITIZERS)
  add_test(NAME conformance_jit.asan
    COMMAND conformance_interp_asan $<TARGET_FILE:ncclbpf_asan> --jit ${NCCLBPF_CONF_CASES})
  set_tests_properties(conformance_jit.asan PROPERTIES TIMEOUT 120 LABELS "asan;conformance"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
