# Our own conformance cases (tests/conformance/cases/*.case) through the real CLI binary:
# `ncclbpf exec --interp` always, `--jit` where the binary has a JIT (the runner skips visibly
# otherwise). The .asan twins run the sanitizer build of both the runner and the CLI.
set(NCCLBPF_CONF_CASES ${CMAKE_CURRENT_LIST_DIR}/cases)
ncclbpf_test(conformance_interp SOURCES ${CMAKE_CURRENT_LIST_DIR}/conformance_runner.c
  ARGS $<TARGET_FILE:ncclbpf> --interp ${NCCLBPF_CONF_CASES}
  ASAN_ARGS $<TARGET_FILE:ncclbpf_asan> --interp ${NCCLBPF_CONF_CASES}
  TIMEOUT 120 LABELS conformance)
ncclbpf_add_twin_test(NAME conformance_jit
  COMMAND $<TARGET_FILE:conformance_interp> $<TARGET_FILE:ncclbpf> --jit ${NCCLBPF_CONF_CASES}
  TIMEOUT 120 LABELS conformance)
