# Live inspection's cost to the hot path: tuner calls through the shipped plugin with and without
# a client hammering `stat` (inspect_bench.c prints the ratio). A short smoke run is a test.
add_executable(inspect_bench ${CMAKE_CURRENT_LIST_DIR}/inspect_bench.c)
target_include_directories(inspect_bench PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PROJECT_SOURCE_DIR}/tests/plugin)
target_link_libraries(inspect_bench PRIVATE dl pthread)
add_dependencies(inspect_bench nccl_ncclbpf)
if(NCCLBPF_BUILD_POLICIES AND BUILD_TESTING)
  ncclbpf_add_test(NAME inspect_bench_smoke COMMAND inspect_bench $<TARGET_FILE:nccl_ncclbpf>
    ${NCCLBPF_POLICY_DIR}/size_aware.o 20000 2
    OUTPUT "ratio hammered/quiet: [0-9]" "control-plane directory removed"
    LABELS "bench;inspect" TIMEOUT 60)
endif()
