# Live inspection (ncclbpf ps / stat / map against a process running the shipped plugin).
# Needs the test policy compiled with clang.
if(NCCLBPF_BUILD_POLICIES)
  set(INSPECT_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
  set(INSPECT_POLICY ${CMAKE_CURRENT_BINARY_DIR}/inspect_policies/inspect.o)
  add_custom_command(OUTPUT ${INSPECT_POLICY}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/inspect_policies
    COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS}
            -c ${INSPECT_TEST_DIR}/policies/inspect.c -o ${INSPECT_POLICY}
    DEPENDS ${INSPECT_TEST_DIR}/policies/inspect.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    COMMENT "BPF tests/inspect/policies/inspect.c")
  add_custom_target(inspect_policies ALL DEPENDS ${INSPECT_POLICY})

  set(INSPECT_JSON ${PROJECT_SOURCE_DIR}/tests/cli/json_expect.py)
  set(INSPECT_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf> $<TARGET_FILE:ncclbpf> ${INSPECT_POLICY}
    ${INSPECT_JSON})
  if(NCCLBPF_SANITIZERS)
    set(INSPECT_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf_asan> $<TARGET_FILE:ncclbpf_asan> ${INSPECT_POLICY}
      ${INSPECT_JSON})
  endif()
  ncclbpf_test(test_inspect SOURCES ${INSPECT_TEST_DIR}/test_inspect.c LIBS dl
    ARGS $<TARGET_FILE:nccl_ncclbpf> $<TARGET_FILE:ncclbpf> ${INSPECT_POLICY} ${INSPECT_JSON}
    ASAN_ARGS ${INSPECT_ASAN_ARGS} LABELS "plugin;cli;inspect" TIMEOUT 300
  # The test forks while the plugin's threads (control plane, inspection server) run. GCC 12's
  # LeakSanitizer then deadlocks in the child's exit-time leak check when one of those threads
  # held an ASan allocator lock at the fork (reproduced: 6 of 6 parallel runs hung). Leak
  # checking is off for this one test; ASan's memory-error checks stay on.
    ASAN_ENVIRONMENT "ASAN_OPTIONS=${NCCLBPF_ASAN_OPTIONS}:detect_leaks=0")
  foreach(t test_inspect test_inspect_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PROJECT_SOURCE_DIR}/tests/plugin)
      add_dependencies(${t} nccl_ncclbpf ncclbpf inspect_policies)
    endif()
  endforeach()
  # The runtime for its host-name rule (ncclbpf/proc_registry.h), which names the records.
  target_link_libraries(test_inspect PRIVATE ncclbpf_runtime)
  if(TARGET test_inspect_asan)
    target_link_libraries(test_inspect_asan PRIVATE ncclbpf_runtime_asan)
  endif()
  if(TARGET test_inspect_asan)
    add_dependencies(test_inspect_asan nccl_ncclbpf_asan ncclbpf_asan)
  endif()
endif()

# The env section of `ncclbpf stat` through the reporter hook the env adapter registers (the
# runtime linked in directly; this test plays the adapter).
ncclbpf_test(test_inspect_env SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_inspect_env.c
  ARGS $<TARGET_FILE:ncclbpf> LABELS "cli;inspect" TIMEOUT 60)
target_link_libraries(test_inspect_env PRIVATE ncclbpf_runtime pthread)
add_dependencies(test_inspect_env ncclbpf)
if(TARGET test_inspect_env_asan)
  target_link_libraries(test_inspect_env_asan PRIVATE ncclbpf_runtime_asan pthread)
  add_dependencies(test_inspect_env_asan ncclbpf)
endif()
