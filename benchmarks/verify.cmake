# Verification time per shipped policy (median of many runs, next to the structural-check
# baseline of the same run; with --cold, the first verification in a fresh process).
# `verify_bench` prints the table; `verify_bench.smoke` keeps it building and every shipped
# policy accepted, without timing anything.
if(NCCLBPF_POLICY_DIR)
  file(GLOB VB_POLICY_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/policies/*.c)
  set(VB_FILES "")
  foreach(src ${VB_POLICY_SOURCES})
    get_filename_component(n ${src} NAME_WE)
    string(APPEND VB_FILES "\"${NCCLBPF_POLICY_DIR}/${n}.o\",")
  endforeach()
  add_executable(verify_bench ${CMAKE_CURRENT_LIST_DIR}/verify_bench.c)
  target_compile_definitions(verify_bench PRIVATE "NCCLBPF_BENCH_POLICIES=${VB_FILES}")
  target_link_libraries(verify_bench PRIVATE ncclbpf_platform)
  if(TARGET policies) # the objects it reads, when this build compiles them
    add_dependencies(verify_bench policies)
  endif()
  if(BUILD_TESTING)
    ncclbpf_add_test(NAME verify_bench.smoke COMMAND verify_bench --quick LABELS bench TIMEOUT 60)
    # --cold: each sample a process of its own (the program run again); checks that path works.
    ncclbpf_add_test(NAME verify_bench.cold_smoke COMMAND verify_bench --quick --cold
                     LABELS bench TIMEOUT 120)
  endif()
endif()
