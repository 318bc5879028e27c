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

# The exported text as a program prints it (telem_sample), and the Grafana dashboard checked
# against Grafana's dashboard model and against those metric and label names.
add_executable(telem_sample ${TELEM_TEST_DIR}/telem_sample.c ${NCCL_ADAPTER_SOURCES})
target_include_directories(telem_sample PRIVATE ${NCCL_ADAPTER_INCLUDES}
  ${PROJECT_SOURCE_DIR}/tests/profiler ${PROJECT_SOURCE_DIR}/tests/common ${TELEM_TEST_DIR})
target_link_libraries(telem_sample PRIVATE ncclbpf_runtime pthread m)
if(NCCLBPF_BUILD_POLICIES)
  # With policies/net_counters.o and an element in its exported map net_peers, for the
  # per-peer panels.
  ncclbpf_add_test(NAME grafana_dashboard
    COMMAND python3 ${TELEM_TEST_DIR}/grafana_check.py
            ${PROJECT_SOURCE_DIR}/share/grafana/ncclbpf-telemetry.json $<TARGET_FILE:telem_sample>
            ${NCCLBPF_POLICY_DIR}/net_counters.o net_peers
    OUTPUT "OK" LABELS telemetry TIMEOUT 60)
endif()

# scripts/gpu-e2e.sh's check of the Prometheus textfiles (gpu_e2e_check.py prom) on the text
# telem_sample prints: accepts it, and names a missing rank, wrong bytes, a GPU time far from
# gpubench's and a copy with nothing counted.
ncclbpf_add_test(NAME gpu_prom_check COMMAND bash ${TELEM_TEST_DIR}/prom_check.sh
  ${PROJECT_SOURCE_DIR} $<TARGET_FILE:telem_sample> ${CMAKE_CURRENT_BINARY_DIR}/prom_check
  OUTPUT "prom_check: OK" LABELS "telemetry;cli" TIMEOUT 60)

# `ncclbpf top` against this test's own process.
ncclbpf_telem_test(test_top ${TELEM_TEST_DIR}/test_top.c $<TARGET_FILE:ncclbpf>)
foreach(t test_top test_top_asan)
  if(TARGET ${t})
    add_dependencies(${t} ncclbpf)
  endif()
endforeach()

# Policy maps exported by declaration: needs the test policies compiled with clang.
if(NCCLBPF_BUILD_POLICIES)
  set(TELEM_POLICY_DIR ${CMAKE_CURRENT_BINARY_DIR}/telem_policies)
  ncclbpf_bpf_objects(TELEM_POLICY_OBJECTS ${TELEM_POLICY_DIR} ${TELEM_TEST_DIR}/policies
                      export export_float export_reserved)
  add_custom_target(telem_policies ALL DEPENDS ${TELEM_POLICY_OBJECTS})
  ncclbpf_telem_test(test_telem_maps ${TELEM_TEST_DIR}/test_telem_maps.c ${TELEM_POLICY_DIR})
  foreach(t test_telem_maps test_telem_maps_asan)
    if(TARGET ${t})
      add_dependencies(${t} telem_policies)
    endif()
  endforeach()
endif()
