# ncclbpf-net-bench: the net plugin's TCP transport through its exported table, two processes
# over loopback, no NCCL: latency and bandwidth per size, with and without a policy attached
# (hook cost) and with one socket (gain of several sockets/threads), all in one run.
add_executable(ncclbpf-net-bench ${CMAKE_CURRENT_LIST_DIR}/net_bench.c)
target_include_directories(ncclbpf-net-bench PRIVATE ${NCCL_ADAPTER_INCLUDES}
  ${PROJECT_SOURCE_DIR}/tests/net)
target_link_libraries(ncclbpf-net-bench PRIVATE dl m pthread)
target_compile_definitions(ncclbpf-net-bench PRIVATE
  NET_BENCH_DEFAULT_LIB="$<TARGET_FILE:nccl_ncclbpf>"
  NET_BENCH_DEFAULT_POLICY="${PROJECT_BINARY_DIR}/policies/net_counters.o")
set_target_properties(ncclbpf-net-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
add_dependencies(ncclbpf-net-bench nccl_ncclbpf)
if(TARGET nccl_net_fake)
  target_compile_definitions(ncclbpf-net-bench PRIVATE
    NET_BENCH_DEFAULT_INNER="$<TARGET_FILE:nccl_net_fake>")
  add_dependencies(ncclbpf-net-bench nccl_net_fake)
endif()
if(BUILD_TESTING AND NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME net_bench_smoke COMMAND ncclbpf-net-bench --reps 1 --sizes 8,1M --time 0.02
    OUTPUT "1 MiB .*hook cost" LABELS "net;bench" TIMEOUT 120)
endif()
# Benchmark-only net policies: net_counters.c without the latency (net_count_only: reads no
# time field, so no clock reads; compare with --policy2) and the latency's clock reads without
# the map work (net_time_only); a deliberately expensive completion program (net_heavy); one
# that does nothing (net_empty: the queueing alone when deferred).
if(NCCLBPF_BUILD_POLICIES)
  set(NET_BENCH_POLICY_DIR ${PROJECT_BINARY_DIR}/benchmarks/policies)
  ncclbpf_bpf_objects(NET_BENCH_POLICIES ${NET_BENCH_POLICY_DIR} ${CMAKE_CURRENT_LIST_DIR}/policies
                      net_count_only net_time_only net_heavy net_empty)
  add_custom_target(net_bench_policies ALL DEPENDS ${NET_BENCH_POLICIES})
  add_dependencies(ncclbpf-net-bench net_bench_policies)
endif()
if(BUILD_TESTING AND NCCLBPF_BUILD_POLICIES AND TARGET nccl_net_fake)
  ncclbpf_add_test(NAME net_bench_hook_path_smoke COMMAND ncclbpf-net-bench --reps 1
    --hook-path-only --policy2 ${NET_BENCH_POLICY_DIR}/net_count_only.o
    OUTPUT "# hook path .* B-A -?[0-9.]+ ns.*B2-A -?[0-9.]+ ns" LABELS "net;bench" TIMEOUT 120)
endif()
