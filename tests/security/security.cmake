# Hardening against other local users (docs/security.md): the trusted-path rules every file and
# directory the plugin and the CLI use go through.
ncclbpf_test(test_trusted_path SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trusted_path.c
  ARGS local LABELS security TIMEOUT 60)
target_link_libraries(test_trusted_path PRIVATE ncclbpf_runtime)
if(TARGET test_trusted_path_asan)
  target_link_libraries(test_trusted_path_asan PRIVATE ncclbpf_runtime_asan)
endif()
# The same rules against entries of other uids: needs root (chown, setuid), else skipped (77).
ncclbpf_add_twin_test(NAME test_trusted_path.foreign COMMAND test_trusted_path foreign
  LABELS security TIMEOUT 60)

# Two unprivileged users created for the test: a pre-created /dev/shm/ncclbpf-<uid> and planted
# records and reload entries against `ncclbpf ps`, `reload --job` and the plugin (root only,
# else skipped with 77).
ncclbpf_add_twin_test(NAME security_other_users COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/other_users.sh
  $<TARGET_FILE:ncclbpf> $<TARGET_FILE:nccl_ncclbpf>
  ${PROJECT_SOURCE_DIR}/adapters/nccl/traces/dgx-h100-8gpu.trace
  LABELS security cli TIMEOUT 120 PROPERTIES RUN_SERIAL TRUE)

# The environment-variable table: every type's rule and WARN, defaults, ranges against the net
# plugin's limits (its header is included for them).
ncclbpf_test(test_envvars SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_envvars.c LABELS security
  TIMEOUT 60)
target_link_libraries(test_envvars PRIVATE ncclbpf_runtime)
target_include_directories(test_envvars PRIVATE ${NCCL_ADAPTER_INCLUDES})
if(TARGET test_envvars_asan)
  target_link_libraries(test_envvars_asan PRIVATE ncclbpf_runtime_asan)
  target_include_directories(test_envvars_asan PRIVATE ${NCCL_ADAPTER_INCLUDES})
endif()
# One reader: no getenv outside runtime/src/base/envvars.c (engine/src/epoch.c, layer 1, reads its
# one variable itself), every name a reader asks for is in the table, and docs/deploying.md's
# Environment section is the table (`ncclbpf env --markdown`).
ncclbpf_add_test(NAME doc_envvars COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_envvars.sh
  ${PROJECT_SOURCE_DIR} $<TARGET_FILE:ncclbpf> LABELS security cli TIMEOUT 60)

# Hostile files and settings against the shipped plugin (FIFOs, directories, links, a refused
# control-plane directory, garbage values, a stalled read): init and destroy return, each with
# its WARN. The test's own read() plays a stalled filesystem, so the executable exports it.
if(NCCLBPF_BUILD_POLICIES)
  set(HOSTILE_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf>)
  if(NCCLBPF_SANITIZERS)
    set(HOSTILE_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf_asan>)
  endif()
  ncclbpf_test(test_hostile SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hostile.c LIBS dl pthread
    ARGS $<TARGET_FILE:nccl_ncclbpf> ${NCCLBPF_POLICY_DIR}/noop.o
    ASAN_ARGS ${HOSTILE_ASAN_LIB} ${NCCLBPF_POLICY_DIR}/noop.o LABELS "security;plugin"
    TIMEOUT 300)
  foreach(t test_hostile test_hostile_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES}
        ${PROJECT_SOURCE_DIR}/tests/plugin)
      target_link_options(${t} PRIVATE -Wl,--export-dynamic-symbol=read)
      add_dependencies(${t} nccl_ncclbpf policies)
    endif()
  endforeach()
  # The runtime for its host-name rule (ncclbpf/proc_registry.h), which names the sockets.
  target_link_libraries(test_hostile PRIVATE ncclbpf_runtime)
  if(TARGET test_hostile_asan)
    target_link_libraries(test_hostile_asan PRIVATE ncclbpf_runtime_asan)
    add_dependencies(test_hostile_asan nccl_ncclbpf_asan)
  endif()
endif()
