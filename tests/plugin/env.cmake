# Env plugin tables (ncclEnvPlugin_v1/v2) of the shipped library: pass-through, the
# NCCL_TUNER_PLUGIN self-default, precedence, pointer stability, 8 concurrent threads.
set(ENV_TEST_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf>)
if(NCCLBPF_SANITIZERS)
  set(ENV_TEST_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf_asan>)
endif()
ncclbpf_test(test_env_plugin SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_env_plugin.c LIBS dl pthread
  ARGS $<TARGET_FILE:nccl_ncclbpf> ASAN_ARGS ${ENV_TEST_ASAN_LIB} LABELS plugin TIMEOUT 60)
foreach(t test_env_plugin test_env_plugin_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES})
    add_dependencies(${t} nccl_ncclbpf)
  endif()
endforeach()
if(TARGET test_env_plugin_asan)
  add_dependencies(test_env_plugin_asan nccl_ncclbpf_asan)
endif()

# Bundle-supplied NCCL settings: the known-parameter table and the text parser (pure).
ncclbpf_test(test_env_settings
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_env_settings.c ${PROJECT_SOURCE_DIR}/adapters/nccl/src/env_settings.c
  LABELS plugin TIMEOUT 60)
foreach(t test_env_settings test_env_settings_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES})
  endif()
endforeach()
