# CLI tests: bad input to `ncclbpf exec` through the conformance runner (against ncclbpf and,
# in sanitizer builds, ncclbpf_asan), shell checks of exec/disasm, and the whole-listing
# comparison of `ncclbpf disasm` with llvm-objdump on a clang-compiled object.
set(NCCLBPF_CLI_TESTS ${CMAKE_CURRENT_LIST_DIR})
add_test(NAME cli_exec_bad_input
  COMMAND conformance_interp $<TARGET_FILE:ncclbpf> --interp ${NCCLBPF_CLI_TESTS}/bad_input.case)
add_test(NAME cli_exec
  COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_test.sh $<TARGET_FILE:ncclbpf>
          ${NCCLBPF_CLI_TESTS}/exec_elf_sample.bpf.c ${PROJECT_SOURCE_DIR}/include)
add_test(NAME cli_disasm_llvm
  COMMAND bash ${NCCLBPF_CLI_TESTS}/disasm_llvm.sh $<TARGET_FILE:ncclbpf>
          ${NCCLBPF_CLI_TESTS}/disasm_sample.bpf.c)
# The conventions of every sub-command (help, usage errors, missing files; cli_conventions.sh),
# file-mode reload (--check changes nothing, the multi-rank warning; cli_reload.sh), replay of a
# policy that does not load (cli_replay.sh).
add_test(NAME cli_conventions
  COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_conventions.sh $<TARGET_FILE:ncclbpf>)
set_tests_properties(cli_exec_bad_input cli_exec cli_disasm_llvm cli_conventions PROPERTIES
  TIMEOUT 120 LABELS cli)
if(NCCLBPF_BUILD_POLICIES)
  add_test(NAME cli_reload
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_reload.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR})
  add_test(NAME cli_replay_refuses
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_replay.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}
            ${PROJECT_SOURCE_DIR}/adapters/nccl/traces/dgx-h100-8gpu.trace)
  set_tests_properties(cli_reload cli_replay_refuses PROPERTIES TIMEOUT 120 LABELS cli)
endif()
if(NCCLBPF_SANITIZERS)
  add_test(NAME cli_exec_bad_input.asan
    COMMAND conformance_interp_asan $<TARGET_FILE:ncclbpf_asan> --interp
            ${NCCLBPF_CLI_TESTS}/bad_input.case)
  add_test(NAME cli_exec.asan
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_test.sh $<TARGET_FILE:ncclbpf_asan>
            ${NCCLBPF_CLI_TESTS}/exec_elf_sample.bpf.c ${PROJECT_SOURCE_DIR}/include)
  add_test(NAME cli_conventions.asan
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_conventions.sh $<TARGET_FILE:ncclbpf_asan>)
  set_tests_properties(cli_exec_bad_input.asan cli_exec.asan cli_conventions.asan PROPERTIES TIMEOUT 120
    LABELS "asan;cli"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
