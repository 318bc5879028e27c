# Plugin tests: the cost-table rules (pure), the CPU harness that dlopens the plugin as NCCL
# does, runtime stress, traces, and the exported-symbol check.
set(PLUGIN_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

ncclbpf_test(test_tuner_table
  SOURCES ${PLUGIN_TEST_DIR}/test_tuner_table.c ${PROJECT_SOURCE_DIR}/adapters/nccl/src/tuner_table.c
  LABELS plugin TIMEOUT 60)
foreach(t test_tuner_table test_tuner_table_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
  endif()
endforeach()

set(PLUGIN_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf>)
if(NCCLBPF_SANITIZERS)
  set(PLUGIN_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf_asan> $<TARGET_FILE:ncclbpf_native_tuner_asan>)
endif()
ncclbpf_test(test_plugin SOURCES ${PLUGIN_TEST_DIR}/test_plugin.c LIBS dl pthread
  ARGS $<TARGET_FILE:nccl_ncclbpf> $<TARGET_FILE:ncclbpf_native_tuner>
  ASAN_ARGS ${PLUGIN_ASAN_ARGS}
  LABELS plugin TIMEOUT 120)
foreach(t test_plugin test_plugin_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
    add_dependencies(${t} nccl_ncclbpf ncclbpf_native_tuner)
  endif()
endforeach()
if(TARGET test_plugin_asan)
  add_dependencies(test_plugin_asan nccl_ncclbpf_asan ncclbpf_native_tuner_asan)
endif()

# Exactly the four tuner tables are exported, and libc is the only dependency.
add_test(NAME plugin_exports COMMAND sh ${PLUGIN_TEST_DIR}/check_exports.sh $<TARGET_FILE:nccl_ncclbpf>)
set_tests_properties(plugin_exports PROPERTIES LABELS plugin)
