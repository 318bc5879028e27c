# GPU benchmark tooling on CPU: bench_util.c's pure functions, `ncclbpf tune` end to end on a
# synthetic sweep (needs the clang-built tuned_table.o), and the GPU scripts (syntax, the report
# helper on checked-in CSVs, and a whole sweep -> tune -> compare/overhead pass against a fake
# ncclbpf-gpubench).
set(GPUBENCH_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
ncclbpf_test(test_bench_util
  SOURCES ${GPUBENCH_TEST_DIR}/test_bench_util.c ${PROJECT_SOURCE_DIR}/tools/gpubench/bench_util.c
  LIBS m LABELS unit)
foreach(t test_bench_util test_bench_util_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tools/gpubench)
  endif()
endforeach()

if(NCCLBPF_BUILD_POLICIES)
  add_test(NAME cli_tune
    COMMAND bash ${GPUBENCH_TEST_DIR}/cli_tune.sh $<TARGET_FILE:ncclbpf>
            ${NCCLBPF_POLICY_DIR}/tuned_table.o ${CMAKE_CURRENT_BINARY_DIR}/cli_tune)
  set_tests_properties(cli_tune PROPERTIES TIMEOUT 300 LABELS cli)
  if(NCCLBPF_SANITIZERS)
    add_test(NAME cli_tune.asan
      COMMAND bash ${GPUBENCH_TEST_DIR}/cli_tune.sh $<TARGET_FILE:ncclbpf_asan>
              ${NCCLBPF_POLICY_DIR}/tuned_table.o ${CMAKE_CURRENT_BINARY_DIR}/cli_tune_asan)
    set_tests_properties(cli_tune.asan PROPERTIES TIMEOUT 600 LABELS "asan;cli"
      ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endif()
  add_test(NAME gpu_scripts
    COMMAND bash ${GPUBENCH_TEST_DIR}/gpu_scripts.sh ${PROJECT_SOURCE_DIR}
            $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/gpu_scripts)
  set_tests_properties(gpu_scripts PROPERTIES TIMEOUT 600 LABELS cli)
endif()
