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

# A bundle carrying NCCL settings (.ncclbpf.env section), served through the env plugin.
if(NCCLBPF_BUILD_POLICIES)
  set(ENV_BUNDLE ${CMAKE_CURRENT_BINARY_DIR}/env_policies/with_env.o)
  add_custom_command(OUTPUT ${ENV_BUNDLE}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/env_policies
    COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS}
            -c ${CMAKE_CURRENT_LIST_DIR}/policies/with_env.c -o ${ENV_BUNDLE}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/policies/with_env.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    COMMENT "BPF with_env.c")
  add_custom_target(env_policies ALL DEPENDS ${ENV_BUNDLE})
  ncclbpf_test(test_env_bundle SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_env_bundle.c LIBS dl
    ARGS $<TARGET_FILE:nccl_ncclbpf> ${ENV_BUNDLE} ASAN_ARGS ${ENV_TEST_ASAN_LIB} ${ENV_BUNDLE}
    LABELS plugin TIMEOUT 60
    # The refused lines are reported on stderr with their line, once.
    OUTPUT "2 setting\\(s\\) not applied, first at line 4: unknown NCCL parameter 'NCCL_NOT_A_PARAM'.*test_env_bundle: [0-9]+ checks passed")
  foreach(t test_env_bundle test_env_bundle_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES})
      add_dependencies(${t} nccl_ncclbpf env_policies)
    endif()
  endforeach()
  if(TARGET test_env_bundle_asan)
    add_dependencies(test_env_bundle_asan nccl_ncclbpf_asan)
  endif()
endif()

# Net plugin on request and provenance (env_served_foreach): a bundle asking for the net plugin;
# the env plugin's sources are linked in because the listing is not exported.
if(NCCLBPF_BUILD_POLICIES)
  set(NET_BUNDLE ${CMAKE_CURRENT_BINARY_DIR}/env_policies/with_net.o)
  add_custom_command(OUTPUT ${NET_BUNDLE}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/env_policies
    COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS}
            -c ${CMAKE_CURRENT_LIST_DIR}/policies/with_net.c -o ${NET_BUNDLE}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/policies/with_net.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    COMMENT "BPF with_net.c")
  add_custom_target(env_net_policies ALL DEPENDS ${NET_BUNDLE})
  set(ENV_SRC ${PROJECT_SOURCE_DIR}/adapters/nccl/src)
  ncclbpf_test(test_env_served
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_env_served.c ${ENV_SRC}/env.c ${ENV_SRC}/env_bundle.c
            ${ENV_SRC}/env_settings.c
    LIBS dl pthread ARGS ${NET_BUNDLE} ASAN_ARGS ${NET_BUNDLE} LABELS plugin TIMEOUT 60)
  target_link_libraries(test_env_served PRIVATE ncclbpf_runtime)
  if(TARGET test_env_served_asan)
    target_link_libraries(test_env_served_asan PRIVATE ncclbpf_runtime_asan)
  endif()
  foreach(t test_env_served test_env_served_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES})
      add_dependencies(${t} env_net_policies)
    endif()
  endforeach()
endif()
