# The runtime's own parts, tested alone (runtime/src/base): the background service of the
# inspection server and the telemetry exporter (start once, owner-only stop, destructor).
ncclbpf_test(test_rt_service SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rt_service.c
  LABELS "runtime" TIMEOUT 60)
target_link_libraries(test_rt_service PRIVATE ncclbpf_runtime pthread)
target_include_directories(test_rt_service PRIVATE ${PROJECT_SOURCE_DIR}/runtime/src/base)
if(TARGET test_rt_service_asan)
  target_link_libraries(test_rt_service_asan PRIVATE ncclbpf_runtime_asan pthread)
  target_include_directories(test_rt_service_asan PRIVATE ${PROJECT_SOURCE_DIR}/runtime/src/base)
endif()

# The one walk over a map's elements (ncclbpf/map_walk.h): carry-over, map dump, the telemetry's
# exported maps, test-run's snapshots.
ncclbpf_test(test_rt_map_walk SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rt_map_walk.c
  LABELS "runtime" TIMEOUT 60)
target_link_libraries(test_rt_map_walk PRIVATE ncclbpf_runtime)
if(TARGET test_rt_map_walk_asan)
  target_link_libraries(test_rt_map_walk_asan PRIVATE ncclbpf_runtime_asan)
endif()
