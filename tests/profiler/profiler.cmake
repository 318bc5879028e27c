# Profiler adapter tests: NCCL 2.27-2.30 shaped event streams through the exported
# ncclProfiler_v4/_v5/_v6 tables (adapter and runtime linked in, so the policy's maps can be
# read), a concurrent stress test with ASan and TSan twins, and the closed-loop experiment.
set(PROF_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
if(NOT NCCLBPF_BUILD_POLICIES)
  return()
endif()

# Test-only profiler programs: prof_record.o (SEC("profiler")) and prof_record_proxy.o
# (SEC("profiler/proxy")).
set(PROF_POLICY_DIR ${CMAKE_CURRENT_BINARY_DIR}/profiler_policies)
set(PROF_POLICIES)
foreach(variant "" "_proxy" "_end")
  set(out ${PROF_POLICY_DIR}/prof_record${variant}.o)
  set(defs)
  if(variant STREQUAL "_proxy")
    set(defs -DPROXY)
  elseif(variant STREQUAL "_end")
    set(defs -DEND_ONLY)
  endif()
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROF_POLICY_DIR}
    COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS}
            ${defs}
            -c ${PROF_TEST_DIR}/policies/prof_record.c -o ${out}
    DEPENDS ${PROF_TEST_DIR}/policies/prof_record.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    COMMENT "BPF prof_record.c${variant}")
  list(APPEND PROF_POLICIES ${out})
endforeach()
add_custom_target(profiler_test_policies ALL DEPENDS ${PROF_POLICIES})

# ncclbpf_prof_test(NAME SOURCES... ARGS... ASAN_ARGS...): a test linking the adapter and the
# runtime (and its ASan twin with the ASan runtime).
function(ncclbpf_prof_test name)
  cmake_parse_arguments(P "" "" "SOURCES;ARGS;ASAN_ARGS" ${ARGN})
  ncclbpf_test(${name} SOURCES ${P_SOURCES} ${NCCL_ADAPTER_SOURCES} LIBS pthread
    ARGS ${P_ARGS} ASAN_ARGS ${P_ASAN_ARGS} LABELS "plugin;profiler" TIMEOUT 300)
  target_link_libraries(${name} PRIVATE ncclbpf_runtime)
  target_include_directories(${name} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PROF_TEST_DIR})
  add_dependencies(${name} profiler_test_policies policies)
  if(TARGET ${name}_asan)
    target_link_libraries(${name}_asan PRIVATE ncclbpf_runtime_asan)
    target_include_directories(${name}_asan PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PROF_TEST_DIR})
    add_dependencies(${name}_asan profiler_test_policies policies)
  endif()
endfunction()

ncclbpf_prof_test(test_profiler SOURCES ${PROF_TEST_DIR}/test_profiler.c
  ARGS ${PROF_POLICY_DIR}/prof_record.o ${PROF_POLICY_DIR}/prof_record_proxy.o
       ${NCCLBPF_POLICY_DIR} ${PROF_POLICY_DIR}/prof_record_end.o)
ncclbpf_prof_test(test_profiler_stress SOURCES ${PROF_TEST_DIR}/test_profiler_stress.c
  ARGS 4 3 20000 ${PROF_POLICY_DIR}/prof_record.o
  ASAN_ARGS 2 3 5000 ${PROF_POLICY_DIR}/prof_record.o)

# The verifier's answer to the naive closed loop, through the CLI.
ncclbpf_add_test(NAME verify_closed_loop_direct COMMAND $<TARGET_FILE:ncclbpf> verify
  ${NCCLBPF_POLICY_DIR}/unsafe/closed_loop_direct.o STATUS 1
  OUTPUT "adapt \\(tuner\\): REJECTED: .*tuner decision `n_channels` depends on a rank-local value \\(rank-local map `lat_by_bucket`.*`lat_by_bucket` is written by profiler program `measure` at line [0-9]+.*through the control plane"
  LABELS "profiler;verifier")
ncclbpf_add_test(NAME verify_closed_loop_channels COMMAND $<TARGET_FILE:ncclbpf> verify
  ${NCCLBPF_POLICY_DIR}/closed_loop_channels.o OUTPUT "pick_channels +tuner +accepted "
  NOT_OUTPUT "REJECTED" LABELS "profiler;verifier")

# ThreadSanitizer build of the stress test: adapter, runtime and engine compiled with TSan.
if(NCCLBPF_SANITIZERS)
  file(GLOB_RECURSE PROF_TSAN_ENGINE CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/src/*.c)
  list(FILTER PROF_TSAN_ENGINE EXCLUDE REGEX "/src/jit/arch_[^/]*/")
  set(PROF_TSAN_ARCH none)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    set(PROF_TSAN_ARCH x86_64)
  endif()
  file(GLOB PROF_TSAN_JIT CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/src/jit/arch_${PROF_TSAN_ARCH}/*.c)
  add_executable(test_profiler_stress_tsan ${PROF_TEST_DIR}/test_profiler_stress.c
    ${NCCL_ADAPTER_SOURCES} ${NCCLBPF_RUNTIME_SOURCES} ${PROF_TSAN_ENGINE} ${PROF_TSAN_JIT})
  target_include_directories(test_profiler_stress_tsan PRIVATE ${NCCL_ADAPTER_INCLUDES}
    ${PROF_TEST_DIR} ${PROJECT_SOURCE_DIR}/tests/common ${PROJECT_SOURCE_DIR}/runtime/include
    ${PROJECT_SOURCE_DIR}/runtime/src ${PROJECT_SOURCE_DIR}/engine/include
    ${PROJECT_SOURCE_DIR}/engine/src ${PROJECT_SOURCE_DIR}/include)
  if(NOT PROF_TSAN_ARCH STREQUAL "none")
    target_compile_definitions(test_profiler_stress_tsan PRIVATE NCCLBPF_HAVE_JIT=1)
  endif()
  target_compile_options(test_profiler_stress_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(test_profiler_stress_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_profiler_stress_tsan PRIVATE pthread)
  add_dependencies(test_profiler_stress_tsan profiler_test_policies)
  ncclbpf_add_test(NAME test_profiler_stress.tsan COMMAND test_profiler_stress_tsan 4 3 3000
    ${PROF_POLICY_DIR}/prof_record.o SANITIZER tsan LABELS "plugin;profiler" TIMEOUT 300)
endif()

# The closed-loop experiment (4 ranks, 100,000 collectives, control-plane map updates).
ncclbpf_test(test_closed_loop SOURCES ${PROF_TEST_DIR}/test_closed_loop.c ${NCCL_ADAPTER_SOURCES}
  LIBS pthread ARGS ${NCCLBPF_POLICY_DIR}/closed_loop_channels.o 100000
  ASAN_ARGS ${NCCLBPF_POLICY_DIR}/closed_loop_channels.o 40000
  LABELS "plugin;profiler;cp" TIMEOUT 600)
target_link_libraries(test_closed_loop PRIVATE ncclbpf_runtime)
target_include_directories(test_closed_loop PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PROF_TEST_DIR}
  ${PROJECT_SOURCE_DIR}/tests/plugin)
add_dependencies(test_closed_loop policies)
if(TARGET test_closed_loop_asan)
  target_link_libraries(test_closed_loop_asan PRIVATE ncclbpf_runtime_asan)
  target_include_directories(test_closed_loop_asan PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PROF_TEST_DIR}
    ${PROJECT_SOURCE_DIR}/tests/plugin)
  add_dependencies(test_closed_loop_asan policies)
endif()

# A profiler trace recorded through the shipped plugin (NCCLBPF_TRACE with %h/%p) and replayed
# by `ncclbpf replay --json`: the replayed policy's map must hold exactly what the events imply.
set(PROF_REPLAY_ASAN_ARGS)
if(NCCLBPF_SANITIZERS)
  set(PROF_REPLAY_ASAN_ARGS ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf_asan> $<TARGET_FILE:ncclbpf_asan>
    ${NCCLBPF_POLICY_DIR}/profiler_latency.o ${CMAKE_CURRENT_BINARY_DIR}/prof_replay_asan)
endif()
ncclbpf_test(test_prof_replay SOURCES ${PROF_TEST_DIR}/test_prof_replay.c LIBS dl
  ARGS $<TARGET_FILE:nccl_ncclbpf> $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}/profiler_latency.o
       ${CMAKE_CURRENT_BINARY_DIR}/prof_replay
  ${PROF_REPLAY_ASAN_ARGS} LABELS "plugin;profiler;cli" TIMEOUT 60)
foreach(t test_prof_replay test_prof_replay_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PROF_TEST_DIR}
      ${PROJECT_SOURCE_DIR}/include)
    add_dependencies(${t} policies nccl_ncclbpf ncclbpf)
  endif()
endforeach()
# The runtime for its host-name rule (ncclbpf/proc_registry.h), which %h of NCCLBPF_TRACE uses.
target_link_libraries(test_prof_replay PRIVATE ncclbpf_runtime)
if(TARGET test_prof_replay_asan)
  target_link_libraries(test_prof_replay_asan PRIVATE ncclbpf_runtime_asan)
  add_dependencies(test_prof_replay_asan nccl_ncclbpf_asan ncclbpf_asan)
endif()
