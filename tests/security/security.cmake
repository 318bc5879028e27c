# Hardening against other local users (docs/security.md): the trusted-path rules every file and
# directory the plugin and the CLI use go through.
ncclbpf_test(test_trusted_path SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trusted_path.c
  ARGS local LABELS security TIMEOUT 60)
target_link_libraries(test_trusted_path PRIVATE ncclbpf_runtime)
if(TARGET test_trusted_path_asan)
  target_link_libraries(test_trusted_path_asan PRIVATE ncclbpf_runtime_asan)
endif()
# The same rules against entries of other uids: needs root (chown, setuid), else skipped (77).
add_test(NAME test_trusted_path.foreign COMMAND test_trusted_path foreign)
set_tests_properties(test_trusted_path.foreign PROPERTIES LABELS security TIMEOUT 60
  SKIP_RETURN_CODE 77)
