# Profiler benchmark: cost per profiler event through the exported ncclProfiler_v5 callbacks of
# the dlopened plugin, with a program attached vs none vs mask 0, in one run. The smoke test
# keeps it building and checks the mask answers (no timing assertion).
if(NCCLBPF_BUILD_POLICIES)
  set(PROF_BENCH_DIR ${PROJECT_BINARY_DIR}/benchmarks/policies)
  set(out ${PROF_BENCH_DIR}/prof_noop.o)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROF_BENCH_DIR}
    COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS}
            -c ${CMAKE_CURRENT_LIST_DIR}/profiler/prof_noop.c -o ${out}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/profiler/prof_noop.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    COMMENT "BPF benchmarks/profiler/prof_noop.c")
  add_custom_target(profiler_bench_policies ALL DEPENDS ${out})
  add_executable(profiler_bench ${CMAKE_CURRENT_LIST_DIR}/profiler/profiler_bench.c)
  target_include_directories(profiler_bench PRIVATE ${NCCL_ADAPTER_INCLUDES}
    ${PROJECT_SOURCE_DIR}/tools/ncclbpf)
  target_compile_options(profiler_bench PRIVATE -O2)
  target_link_libraries(profiler_bench PRIVATE dl)
  add_dependencies(profiler_bench nccl_ncclbpf profiler_bench_policies policies)
  set_target_properties(profiler_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  ncclbpf_add_test(NAME profiler_bench.smoke COMMAND profiler_bench $<TARGET_FILE:nccl_ncclbpf>
    ${NCCLBPF_POLICY_DIR}/noop.o ${out} ${NCCLBPF_POLICY_DIR}/profiler_latency.o 2000
    OUTPUT "latency +66 " NOT_OUTPUT "not run" LABELS "bench;profiler")
endif()
