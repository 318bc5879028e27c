# The directory medium alone: replace, create once, no temp file left (runtime/src/cp/cp_dir.c).
ncclbpf_test(test_cp_dir SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cp_dir.c LABELS "cp")
target_link_libraries(test_cp_dir PRIVATE ncclbpf_runtime)
target_include_directories(test_cp_dir PRIVATE ${PROJECT_SOURCE_DIR}/runtime/src/cp)
if(TARGET test_cp_dir_asan)
  target_link_libraries(test_cp_dir_asan PRIVATE ncclbpf_runtime_asan)
  target_include_directories(test_cp_dir_asan PRIVATE ${PROJECT_SOURCE_DIR}/runtime/src/cp)
endif()

# Control plane (docs/control-plane.md): rank-consistent activation through the real plugin, in
# one process (two ranks) and across forked processes with injected faults. Needs the BPF
# policies (version bundles, table_tuner).
if(NCCLBPF_BUILD_POLICIES)
  set(CP_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
  set(CP_VERSION_DIR ${CMAKE_CURRENT_BINARY_DIR}/version_policies)
  ncclbpf_test(test_cp_single SOURCES ${CP_TEST_DIR}/test_cp.c LIBS ncclbpf_cp dl pthread
    ARGS single $<TARGET_FILE:nccl_ncclbpf> ${CP_VERSION_DIR} ${NCCLBPF_POLICY_DIR}/table_tuner.o
    NO_SANITIZE LABELS "cp;plugin" TIMEOUT 120)
  ncclbpf_add_test(NAME test_cp_multi COMMAND test_cp_single multi $<TARGET_FILE:nccl_ncclbpf>
    ${CP_VERSION_DIR} --procs 3 --reloads 40 --seed 7 LABELS "cp;plugin" TIMEOUT 240)
  # An acknowledged reload whose directory becomes unusable: the fence wait stays bounded.
  ncclbpf_add_test(NAME test_cp_stuck COMMAND test_cp_single stuck $<TARGET_FILE:nccl_ncclbpf>
    ${CP_VERSION_DIR} LABELS "cp;plugin;security" TIMEOUT 120)
  ncclbpf_add_test(NAME test_cp_percomm COMMAND test_cp_single percomm
    $<TARGET_FILE:nccl_ncclbpf> ${NCCLBPF_POLICY_DIR}/explore_protocols.o LABELS "cp;plugin"
    TIMEOUT 120)
  ncclbpf_add_test(NAME gpu_split_check COMMAND bash ${CP_TEST_DIR}/split_check.sh
    ${PROJECT_SOURCE_DIR} $<TARGET_FILE:test_cp_single> $<TARGET_FILE:nccl_ncclbpf>
    ${NCCLBPF_POLICY_DIR}/explore_protocols.o ${CMAKE_CURRENT_BINARY_DIR}/split_check
    LABELS "cp;plugin;cli" TIMEOUT 120)
  target_include_directories(test_cp_single PRIVATE ${NCCL_ADAPTER_INCLUDES}
    ${PROJECT_SOURCE_DIR}/tests/plugin)
  add_dependencies(test_cp_single nccl_ncclbpf version_policies policies)
endif()
if(NCCLBPF_BUILD_POLICIES AND TARGET ncclbpf)
  ncclbpf_add_test(NAME cli_cp_run_reload COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cp_cli.sh
    $<TARGET_FILE:ncclbpf> $<TARGET_FILE:test_cp_single> $<TARGET_FILE:nccl_ncclbpf>
    ${CMAKE_CURRENT_BINARY_DIR}/version_policies ${CMAKE_CURRENT_BINARY_DIR}/inspect_policies/inspect.o
    ${NCCLBPF_POLICY_DIR}/unsafe/div_zero.o LABELS "cp;cli" TIMEOUT 120)
endif()
