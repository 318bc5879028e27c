# The comparison tuner: the plugin's own adapter and runtime with native-C policies
# (tuner_native_policies.c) instead of eBPF. Tests use its deliberately bad policies; the
# benchmark's second column (eBPF against the same logic in C, both inside our adapter). Beside
# the native baselines in lib/ncclbpf-bench/, where `ncclbpf bench` finds it.
ncclbpf_nccl_plugin(ncclbpf_native_tuner ncclbpf-native-tuner ncclbpf_runtime
  ${CMAKE_CURRENT_LIST_DIR}/tuner_native_policies.c)
set_target_properties(ncclbpf_native_tuner PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib/ncclbpf-bench)
if(NCCLBPF_SANITIZERS)
  ncclbpf_nccl_plugin(ncclbpf_native_tuner_asan ncclbpf-native-tuner-asan ncclbpf_runtime_asan
    ${CMAKE_CURRENT_LIST_DIR}/tuner_native_policies.c)
  target_compile_options(ncclbpf_native_tuner_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
  target_link_options(ncclbpf_native_tuner_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
  set_target_properties(ncclbpf_native_tuner_asan PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib/ncclbpf-bench)
endif()
install(TARGETS ncclbpf_native_tuner LIBRARY DESTINATION lib/ncclbpf-bench)

# Benchmark-only eBPF policies (two map lookups per decision).
if(NCCLBPF_BUILD_POLICIES)
  set(TUNER_BENCH_POLICY_DIR ${PROJECT_BINARY_DIR}/benchmarks/policies)
  set(out ${TUNER_BENCH_POLICY_DIR}/two_lookups.o)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${TUNER_BENCH_POLICY_DIR}
    COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_CFLAGS}
            -c ${CMAKE_CURRENT_LIST_DIR}/policies/two_lookups.c -o ${out}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/policies/two_lookups.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "BPF benchmarks/policies/two_lookups.c")
  add_custom_target(tuner_bench_policies ALL DEPENDS ${out})
  install(FILES ${out} DESTINATION share/ncclbpf/bench)
endif()
