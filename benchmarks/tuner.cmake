# The comparison tuner: the plugin's own adapter and runtime with native-C policies
# (tuner_native_policies.c) instead of eBPF. Tests use its deliberately bad policies; the
# benchmark uses it as the native baseline measured in the same run.
ncclbpf_nccl_plugin(ncclbpf_native_tuner ncclbpf-native-tuner ncclbpf_runtime
  ${CMAKE_CURRENT_LIST_DIR}/tuner_native_policies.c)
if(NCCLBPF_SANITIZERS)
  ncclbpf_nccl_plugin(ncclbpf_native_tuner_asan ncclbpf-native-tuner-asan ncclbpf_runtime_asan
    ${CMAKE_CURRENT_LIST_DIR}/tuner_native_policies.c)
  target_compile_options(ncclbpf_native_tuner_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
  target_link_options(ncclbpf_native_tuner_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
endif()
