# Map tests that need more than a unit test: the kernel differential (bpf() as root; it prints
# SKIP and passes where refused) and the multi-threaded stress built with ThreadSanitizer.
if(NCCLBPF_KERNEL_TESTS)
  ncclbpf_test(test_maps_kernel SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_maps_kernel.c
    ARGS 20000 ASAN_ARGS 5000 TIMEOUT 120 LABELS maps kernel)
endif()

# Multi-threaded stress: plain and ASan variants through ncclbpf_test, plus a ThreadSanitizer
# variant against a TSan build of the map, epoch and helper sources (the engine library's other
# parts are not needed and stay out of this build).
ncclbpf_test(test_maps_stress SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_maps_stress.c
  ARGS 30000 ASAN_ARGS 10000 TIMEOUT 60 LABELS maps stress)

include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=thread)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
check_c_source_compiles("int main(void){return 0;}" NCCLBPF_HAVE_TSAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NCCLBPF_HAVE_TSAN)
  file(GLOB NCCLBPF_TSAN_SOURCES CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/engine/src/maps/*.c
    ${PROJECT_SOURCE_DIR}/engine/src/helpers/*.c
    ${PROJECT_SOURCE_DIR}/engine/src/epoch.c ${PROJECT_SOURCE_DIR}/engine/src/err.c)
  add_library(ncclbpf_engine_tsan STATIC ${NCCLBPF_TSAN_SOURCES})
  target_include_directories(ncclbpf_engine_tsan
    PUBLIC ${PROJECT_SOURCE_DIR}/engine/include ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
  target_compile_options(ncclbpf_engine_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(ncclbpf_engine_tsan PUBLIC -fsanitize=thread)
  target_link_libraries(ncclbpf_engine_tsan PUBLIC pthread)

  foreach(t test_maps_stress:${CMAKE_CURRENT_LIST_DIR}/test_maps_stress.c:20000
            test_epoch:${PROJECT_SOURCE_DIR}/tests/unit/test_epoch.c:20000)
    string(REPLACE ":" ";" parts ${t})
    list(GET parts 0 tname)
    list(GET parts 1 tsrc)
    list(GET parts 2 targ)
    add_executable(${tname}_tsan ${tsrc})
    target_compile_options(${tname}_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_libraries(${tname}_tsan PRIVATE ncclbpf_engine_tsan)
    target_include_directories(${tname}_tsan PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    ncclbpf_add_test(NAME ${tname}.tsan COMMAND ${tname}_tsan ${targ} SANITIZER tsan
      LABELS maps TIMEOUT 60)
  endforeach()
  ncclbpf_add_test(NAME test_epoch.fullbarrier.tsan COMMAND test_epoch_tsan 20000 SANITIZER tsan LABELS "maps"
    TIMEOUT 60
    ENVIRONMENT "NCCLBPF_EPOCH_MEMBARRIER=0")
else()
  message(STATUS "ThreadSanitizer not available: map TSan tests not built")
endif()

# Micro-benchmark (ns per map operation, ratios against a plain C array in the same run). Built
# always; registered only as a short smoke run (no timing is asserted). Real figures:
#   build/tests/bench_maps 5000000
add_executable(bench_maps ${CMAKE_CURRENT_LIST_DIR}/bench_maps.c)
target_link_libraries(bench_maps PRIVATE ncclbpf_engine)
ncclbpf_add_test(NAME bench_maps.smoke COMMAND bench_maps 10000 LABELS "maps;bench" TIMEOUT 30)
