# CLI tests: bad input to `ncclbpf exec` through the conformance runner (against ncclbpf and,
# in sanitizer builds, ncclbpf_asan), shell checks of exec/disasm, and the whole-listing
# comparison of `ncclbpf disasm` with llvm-objdump on a clang-compiled object.
set(NCCLBPF_CLI_TESTS ${CMAKE_CURRENT_LIST_DIR})
ncclbpf_add_twin_test(NAME cli_exec_bad_input
  COMMAND $<TARGET_FILE:conformance_interp> $<TARGET_FILE:ncclbpf> --interp
          ${NCCLBPF_CLI_TESTS}/bad_input.case
  TIMEOUT 120 LABELS cli)
ncclbpf_add_twin_test(NAME cli_exec
  COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_test.sh $<TARGET_FILE:ncclbpf>
          ${NCCLBPF_CLI_TESTS}/exec_elf_sample.bpf.c ${PROJECT_SOURCE_DIR}/include
  TIMEOUT 120 LABELS cli)
ncclbpf_add_test(NAME cli_disasm_llvm
  COMMAND bash ${NCCLBPF_CLI_TESTS}/disasm_llvm.sh $<TARGET_FILE:ncclbpf>
          ${NCCLBPF_CLI_TESTS}/disasm_sample.bpf.c
  OUTPUT "disasm vs llvm-objdump: [1-9][0-9]* instructions compared"
  TIMEOUT 120 LABELS cli)
# The conventions of every sub-command (help, usage errors, missing files; cli_conventions.sh),
# file-mode reload (--check changes nothing, the multi-rank warning; cli_reload.sh), replay of a
# policy that does not load (cli_replay.sh). The scripts check each command's exact exit status,
# so a sanitizer report (its own status) in a twin fails them.
ncclbpf_add_twin_test(NAME cli_conventions
  COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_conventions.sh $<TARGET_FILE:ncclbpf>
  OUTPUT "cli_conventions: all checks passed" TIMEOUT 120 LABELS cli)
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_twin_test(NAME cli_reload
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_reload.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}
    OUTPUT "cli_reload: all checks passed" TIMEOUT 120 LABELS cli)
  # `ncclbpf env` checks path settings as the plugin will use them, creating nothing.
  ncclbpf_add_twin_test(NAME cli_env
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_env.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}
    OUTPUT "cli_env: all checks passed" TIMEOUT 120 LABELS cli)
  ncclbpf_add_twin_test(NAME cli_replay_refuses
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_replay.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}
            ${PROJECT_SOURCE_DIR}/adapters/nccl/traces/dgx-h100-8gpu.trace
    OUTPUT "cli_replay: all checks passed" TIMEOUT 120 LABELS cli)
  # Messages that name the file, and the -g hint for objects without source lines
  # (cli_messages.sh)
  ncclbpf_add_twin_test(NAME cli_messages
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_messages.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_CLANG}
            ${PROJECT_SOURCE_DIR}/include ${NCCLBPF_CLI_TESTS}/messages_sample.bpf.c
            ${NCCLBPF_CLI_TESTS}/loop_sample.bpf.c ${NCCLBPF_POLICY_DIR}/unsafe/unbounded_loop.o
    OUTPUT "cli_messages: all checks passed" TIMEOUT 120 LABELS cli)
  # --json of test-run and replay, parsed (cli_json_runs.sh)
  ncclbpf_add_twin_test(NAME cli_json_runs
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_json_runs.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}
            ${PROJECT_SOURCE_DIR}/adapters/nccl/traces/dgx-h100-8gpu.trace
            ${NCCLBPF_CLI_TESTS}/json_expect.py
    OUTPUT "cli_json_runs: all checks passed" TIMEOUT 120 LABELS cli)
  # verify as veristat: many objects, -o csv|json, --compare (cli_verify.sh)
  ncclbpf_add_twin_test(NAME cli_verify
    COMMAND bash ${NCCLBPF_CLI_TESTS}/cli_verify.sh $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}
            ${NCCLBPF_CLI_TESTS}/json_expect.py
    OUTPUT "cli_verify: all checks passed" TIMEOUT 120 LABELS cli)
endif()
