# GPU benchmark tooling on CPU: bench_util.c's pure functions, `ncclbpf tune` end to end on a
# synthetic sweep (needs the clang-built tuned_table.o), and the GPU scripts (syntax, the report
# helper on checked-in CSVs, and a whole sweep -> tune -> compare/overhead pass against a fake
# ncclbpf-gpubench).
set(GPUBENCH_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
ncclbpf_test(test_bench_util
  SOURCES ${GPUBENCH_TEST_DIR}/test_bench_util.c ${PROJECT_SOURCE_DIR}/tools/gpubench/bench_util.c
  LIBS m LABELS unit)
target_link_libraries(test_bench_util PRIVATE ncclbpf_runtime)
if(TARGET test_bench_util_asan)
  target_link_libraries(test_bench_util_asan PRIVATE ncclbpf_runtime_asan)
endif()
foreach(t test_bench_util test_bench_util_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tools/gpubench)
  endif()
endforeach()

if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_twin_test(NAME cli_tune
    COMMAND bash ${GPUBENCH_TEST_DIR}/cli_tune.sh $<TARGET_FILE:ncclbpf>
            ${NCCLBPF_POLICY_DIR}/tuned_table.o ${CMAKE_CURRENT_BINARY_DIR}/cli_tune<TWIN>
    TIMEOUT 600 LABELS cli)
  ncclbpf_add_test(NAME gpu_scripts
    COMMAND bash ${GPUBENCH_TEST_DIR}/gpu_scripts.sh ${PROJECT_SOURCE_DIR}
            $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/gpu_scripts
    TIMEOUT 600 LABELS cli)
endif()

# scripts/gpu-inspector.sh on a CPU: usage and its report on made-up runs with known answers.
ncclbpf_add_test(NAME gpu_inspector
  COMMAND bash ${GPUBENCH_TEST_DIR}/gpu_inspector.sh ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/gpu_inspector
  OUTPUT "OK" TIMEOUT 60 LABELS cli)

# scripts/gpu-e2e.sh's decisions check on a made-up log and trace with known answers.
ncclbpf_add_test(NAME gpu_e2e_decisions
  COMMAND bash ${GPUBENCH_TEST_DIR}/e2e_decisions.sh ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/e2e_decisions
  OUTPUT "e2e_decisions: OK" TIMEOUT 60 LABELS cli)

# gpubench --ab's in-job policy switch against the shipped plugin (hot reload + inspection).
if(NCCLBPF_BUILD_POLICIES)
  set(AB_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf>)
  if(NCCLBPF_SANITIZERS)
    set(AB_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf_asan>)
  endif()
  ncclbpf_test(test_ab_swap
    SOURCES ${GPUBENCH_TEST_DIR}/test_ab_swap.c ${PROJECT_SOURCE_DIR}/tools/gpubench/ab_swap.c
            ${PROJECT_SOURCE_DIR}/tools/ncclbpf/inspect_client.c
            ${PROJECT_SOURCE_DIR}/tools/ncclbpf/install_file.c
    LIBS dl ARGS $<TARGET_FILE:nccl_ncclbpf> ${NCCLBPF_POLICY_DIR}
    ASAN_ARGS ${AB_ASAN_LIB} ${NCCLBPF_POLICY_DIR} LABELS plugin TIMEOUT 60)
  target_link_libraries(test_ab_swap PRIVATE ncclbpf_runtime)
  if(TARGET test_ab_swap_asan)
    target_link_libraries(test_ab_swap_asan PRIVATE ncclbpf_runtime_asan)
  endif()
  foreach(t test_ab_swap test_ab_swap_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tools/gpubench
        ${PROJECT_SOURCE_DIR}/tools/ncclbpf ${NCCL_ADAPTER_INCLUDES} ${PROJECT_SOURCE_DIR}/tests/plugin)
      add_dependencies(${t} policies nccl_ncclbpf)
    endif()
  endforeach()
endif()
