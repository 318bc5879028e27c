# Built-in telemetry and its exports: the profiler tables driven as NCCL drives them with the
# adapter and runtime linked in (like tests/profiler), the strict Prometheus-text and JSON
# parsers the checks use (tests/common), and their own test.
set(TELEM_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# ncclbpf_telem_test(NAME SOURCE [ARGS...]): a test linking the adapter and the runtime.
function(ncclbpf_telem_test name src)
  ncclbpf_test(${name} SOURCES ${src} ${NCCL_ADAPTER_SOURCES} LIBS pthread m
    ARGS ${ARGN} LABELS "plugin;telemetry" TIMEOUT 300)
  foreach(t ${name} ${name}_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES}
        ${PROJECT_SOURCE_DIR}/tests/profiler ${TELEM_TEST_DIR})
    endif()
  endforeach()
  target_link_libraries(${name} PRIVATE ncclbpf_runtime)
  if(TARGET ${name}_asan)
    target_link_libraries(${name}_asan PRIVATE ncclbpf_runtime_asan)
  endif()
endfunction()

ncclbpf_telem_test(test_telemetry ${TELEM_TEST_DIR}/test_telemetry.c)
ncclbpf_test(test_telem_parsers SOURCES ${TELEM_TEST_DIR}/test_telem_parsers.c LIBS m
  LABELS telemetry TIMEOUT 60)
