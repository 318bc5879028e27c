# Plugin tests: the cost-table rules (pure), the CPU harness that dlopens the plugin as NCCL
# does, runtime stress, traces, and the exported-symbol check.
set(PLUGIN_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

ncclbpf_test(test_tuner_table
  SOURCES ${PLUGIN_TEST_DIR}/test_tuner_table.c ${PROJECT_SOURCE_DIR}/adapters/nccl/src/tuner_table.c
  LABELS plugin TIMEOUT 60)
foreach(t test_tuner_table test_tuner_table_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
  endif()
endforeach()

set(PLUGIN_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf>)
if(NCCLBPF_SANITIZERS)
  set(PLUGIN_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf_asan> $<TARGET_FILE:ncclbpf_native_tuner_asan>)
endif()
ncclbpf_test(test_plugin SOURCES ${PLUGIN_TEST_DIR}/test_plugin.c LIBS dl pthread
  ARGS $<TARGET_FILE:nccl_ncclbpf> $<TARGET_FILE:ncclbpf_native_tuner> ${NCCLBPF_POLICY_DIR}
       ${CMAKE_CURRENT_BINARY_DIR}/version_policies
  ASAN_ARGS ${PLUGIN_ASAN_ARGS} ${NCCLBPF_POLICY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/version_policies
  LABELS plugin TIMEOUT 120)
foreach(t test_plugin test_plugin_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
    add_dependencies(${t} nccl_ncclbpf ncclbpf_native_tuner)
    if(TARGET policies)
      add_dependencies(${t} policies)
    endif()
    if(TARGET version_policies)
      add_dependencies(${t} version_policies)
    endif()
  endif()
endforeach()
if(TARGET test_plugin_asan)
  add_dependencies(test_plugin_asan nccl_ncclbpf_asan ncclbpf_native_tuner_asan)
endif()

# Exactly the four tuner tables are exported, and libc is the only dependency.
ncclbpf_add_test(NAME plugin_exports COMMAND sh ${PLUGIN_TEST_DIR}/check_exports.sh
  $<TARGET_FILE:nccl_ncclbpf> LABELS plugin)

# Reload stress: the adapter and runtime linked in directly (the harness reaches the runtime's
# reload API, which the plugin does not export). A ThreadSanitizer build of the same test
# checks the epoch protocol and the swap (runtime, adapter and engine compiled with TSan).
set(PLUGIN_STATIC_SOURCES ${NCCL_ADAPTER_SOURCES})
set(STRESS_VERSION_DIR)
if(NCCLBPF_BUILD_POLICIES)
  set(STRESS_VERSION_DIR ${CMAKE_CURRENT_BINARY_DIR}/version_policies)
endif()
ncclbpf_test(test_reload_stress SOURCES ${PLUGIN_TEST_DIR}/test_reload_stress.c ${PLUGIN_STATIC_SOURCES}
  LIBS pthread ARGS 8 2000 200000 ${STRESS_VERSION_DIR}
  ASAN_ARGS 8 300 20000 ${STRESS_VERSION_DIR} LABELS plugin TIMEOUT 120)
# The tuner's statistics and what a program sees of its context, the same way.
ncclbpf_test(test_tuner_stats SOURCES ${PLUGIN_TEST_DIR}/test_tuner_stats.c ${PLUGIN_STATIC_SOURCES}
  LIBS pthread LABELS plugin TIMEOUT 60)
# Which path each kind of program takes through getCollInfo, and the accounting on each: one
# counter per call (test policies from version_policies; without them only the no-policy part).
ncclbpf_test(test_tuner_paths SOURCES ${PLUGIN_TEST_DIR}/test_tuner_paths.c ${PLUGIN_STATIC_SOURCES}
  LIBS pthread ARGS ${STRESS_VERSION_DIR} ASAN_ARGS ${STRESS_VERSION_DIR} LABELS plugin TIMEOUT 60)
foreach(t test_reload_stress test_tuner_stats test_tuner_paths)
  target_link_libraries(${t} PRIVATE ncclbpf_runtime)
  target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
  if(TARGET ${t}_asan)
    target_link_libraries(${t}_asan PRIVATE ncclbpf_runtime_asan)
    target_include_directories(${t}_asan PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
  endif()
endforeach()

if(NCCLBPF_SANITIZERS)
  file(GLOB_RECURSE TSAN_ENGINE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/src/*.c)
  list(FILTER TSAN_ENGINE_SOURCES EXCLUDE REGEX "/src/jit/arch_[^/]*/")
  # The engine's JIT backend for this host (engine/CMakeLists.txt picks it the same way).
  set(TSAN_JIT_ARCH none)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    set(TSAN_JIT_ARCH x86_64)
  endif()
  file(GLOB TSAN_JIT_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/src/jit/arch_${TSAN_JIT_ARCH}/*.c)
  add_executable(test_reload_stress_tsan ${PLUGIN_TEST_DIR}/test_reload_stress.c
    ${PLUGIN_STATIC_SOURCES} ${NCCLBPF_RUNTIME_SOURCES} ${TSAN_ENGINE_SOURCES} ${TSAN_JIT_SOURCES})
  target_include_directories(test_reload_stress_tsan PRIVATE ${NCCL_ADAPTER_INCLUDES}
    ${PLUGIN_TEST_DIR} ${PROJECT_SOURCE_DIR}/tests/common ${PROJECT_SOURCE_DIR}/runtime/include
    ${PROJECT_SOURCE_DIR}/runtime/src ${PROJECT_SOURCE_DIR}/engine/include
    ${PROJECT_SOURCE_DIR}/engine/src ${PROJECT_SOURCE_DIR}/include)
  if(NOT TSAN_JIT_ARCH STREQUAL "none")
    target_compile_definitions(test_reload_stress_tsan PRIVATE NCCLBPF_HAVE_JIT=1)
  endif()
  target_compile_options(test_reload_stress_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(test_reload_stress_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_reload_stress_tsan PRIVATE pthread)
  ncclbpf_add_test(NAME test_reload_stress.tsan COMMAND test_reload_stress_tsan 8 300 20000
    ${STRESS_VERSION_DIR} SANITIZER tsan LABELS "plugin" TIMEOUT 120)
endif()

# Trace recording through the plugin, then `ncclbpf replay` of that trace through the real
# library: the same policy reproduces every recorded decision; without a policy NCCL's own
# choices come back and differ.
set(TRACE_OUT ${CMAKE_CURRENT_BINARY_DIR}/plugin_trace.txt)
set(TRACE_OUT_ASAN ${CMAKE_CURRENT_BINARY_DIR}/plugin_trace_asan.txt)
set(TRACE_ASAN_ARGS $<TARGET_FILE:ncclbpf_native_tuner> ${TRACE_OUT_ASAN})
if(NCCLBPF_SANITIZERS)
  set(TRACE_ASAN_ARGS $<TARGET_FILE:ncclbpf_native_tuner_asan> ${TRACE_OUT_ASAN})
endif()
ncclbpf_test(test_trace SOURCES ${PLUGIN_TEST_DIR}/test_trace.c LIBS dl
  ARGS $<TARGET_FILE:ncclbpf_native_tuner> ${TRACE_OUT} ASAN_ARGS ${TRACE_ASAN_ARGS}
  LABELS plugin TIMEOUT 60)
foreach(t test_trace test_trace_asan)
  if(TARGET ${t})
    target_link_libraries(${t} PRIVATE $<IF:$<STREQUAL:${t},test_trace>,ncclbpf_runtime,ncclbpf_runtime_asan>)
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
  endif()
endforeach()
# test_trace writes the trace the replays read: a fixture, so that `ctest -R cli_replay` runs it
# first (and skips the replays when it fails) however the tests are picked.
set_tests_properties(test_trace PROPERTIES FIXTURES_SETUP plugin_trace)
ncclbpf_add_test(NAME cli_replay_same_policy COMMAND $<TARGET_FILE:ncclbpf> replay ${TRACE_OUT}
  --plugin $<TARGET_FILE:ncclbpf_native_tuner> --policy native:pick
  OUTPUT "41 calls replayed, 0 decisions differ" NOT_OUTPUT "WARN" LABELS "plugin;cli"
  PROPERTIES FIXTURES_REQUIRED plugin_trace)
ncclbpf_add_test(NAME cli_replay_no_policy COMMAND $<TARGET_FILE:ncclbpf> replay ${TRACE_OUT}
  --plugin $<TARGET_FILE:ncclbpf_native_tuner> --policy none
  OUTPUT "41 calls replayed, 40 decisions differ" LABELS "plugin;cli"
  PROPERTIES FIXTURES_REQUIRED plugin_trace)

# Hot reload through the shipped plugin's file watcher, with bundles whose decisions encode their
# version (tests/plugin/policies/version.c compiled as versions 1..4).
if(NCCLBPF_BUILD_POLICIES)
  set(VERSION_POLICY_DIR ${CMAKE_CURRENT_BINARY_DIR}/version_policies)
  set(VERSION_POLICIES)
  foreach(v 1 2 3 4)
    set(out ${VERSION_POLICY_DIR}/version${v}.o)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${VERSION_POLICY_DIR}
      COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS}
              -DPOLICY_VERSION=${v}
              -c ${PLUGIN_TEST_DIR}/policies/version.c -o ${out}
      DEPENDS ${PLUGIN_TEST_DIR}/policies/version.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
      COMMENT "BPF version.c (version ${v})")
    list(APPEND VERSION_POLICIES ${out})
  endforeach()
  ncclbpf_bpf_objects(PLUGIN_TEST_POLICIES ${VERSION_POLICY_DIR} ${PLUGIN_TEST_DIR}/policies
                      chunk by_nodes observer by_size)
  list(APPEND VERSION_POLICIES ${PLUGIN_TEST_POLICIES})
  # by_size.c again: reading seq (off the register-keeping path); never touching n_channels.
  foreach(variant "seq;READ_SEQ" "cells;NO_CHANNELS")
    list(GET variant 0 suffix)
    list(GET variant 1 define)
    set(out ${VERSION_POLICY_DIR}/by_size_${suffix}.o)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${VERSION_POLICY_DIR}
      COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS} -D${define}
              -c ${PLUGIN_TEST_DIR}/policies/by_size.c -o ${out}
      DEPENDS ${PLUGIN_TEST_DIR}/policies/by_size.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
      COMMENT "BPF by_size.c (-D${define})")
    list(APPEND VERSION_POLICIES ${out})
  endforeach()
  add_custom_target(version_policies ALL DEPENDS ${VERSION_POLICIES})
  foreach(t test_tuner_paths test_tuner_paths_asan)
    if(TARGET ${t})
      add_dependencies(${t} version_policies)
    endif()
  endforeach()
  set(HOT_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf>)
  if(NCCLBPF_SANITIZERS)
    set(HOT_ASAN_LIB $<TARGET_FILE:nccl_ncclbpf_asan>)
  endif()
  ncclbpf_test(test_hot_reload SOURCES ${PLUGIN_TEST_DIR}/test_hot_reload.c LIBS dl pthread
    ARGS $<TARGET_FILE:nccl_ncclbpf> ${VERSION_POLICY_DIR} ${NCCLBPF_POLICY_DIR}/unsafe/null_deref.o 20
    ASAN_ARGS ${HOT_ASAN_LIB} ${VERSION_POLICY_DIR} ${NCCLBPF_POLICY_DIR}/unsafe/null_deref.o 10
    LABELS plugin TIMEOUT 120)
  foreach(t test_hot_reload test_hot_reload_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${PLUGIN_TEST_DIR})
      add_dependencies(${t} version_policies policies)
    endif()
  endforeach()
endif()

# The embedded trace (adapters/nccl/traces) through the shipped plugin: without a policy the
# plugin reproduces NCCL's recorded decisions exactly; with a hot reload in the middle both
# versions' decisions appear.
set(EMBEDDED_TRACE ${PROJECT_SOURCE_DIR}/adapters/nccl/traces/dgx-h100-8gpu.trace)
ncclbpf_add_test(NAME cli_replay_embedded_nopolicy COMMAND $<TARGET_FILE:ncclbpf> replay
  ${EMBEDDED_TRACE} --policy none OUTPUT "130 calls replayed, 0 decisions differ"
  LABELS "plugin;cli")
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME cli_replay_embedded_reload COMMAND $<TARGET_FILE:ncclbpf> replay
    ${EMBEDDED_TRACE} --policy ${NCCLBPF_POLICY_DIR}/size_aware.o --reload-at 60 --reload-policy
    ${NCCLBPF_POLICY_DIR}/table_tuner.o
    OUTPUT "call 60: hot reload of [^\n]*active as version[^\n]*\n.*after .*130 calls replayed"
    LABELS "plugin;cli")
endif()

# Smoke runs of the benchmark and its stress mode (no timing assertions: figures come from
# `ncclbpf bench` with its default rounds, see docs/tuning.md). tests/cli/cli_bench.sh checks its
# options, errors and JSON.
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME cli_bench_smoke COMMAND $<TARGET_FILE:ncclbpf> bench --rounds 3 --calls
    2000 --reloads 3
    OUTPUT "two_lookups +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ .*profiler_latency +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ .*reload cost.*table_tuner"
    LABELS "plugin;cli;bench")
  ncclbpf_add_test(NAME cli_bench_stress_smoke COMMAND $<TARGET_FILE:ncclbpf> bench --stress
    --threads 4 --stress-reloads 200 ${VERSION_POLICY_DIR}/version1.o
    ${VERSION_POLICY_DIR}/version2.o ${VERSION_POLICY_DIR}/version3.o
    ${VERSION_POLICY_DIR}/version4.o
    OUTPUT "200 reloads \\(0 failed\\).* 0 mixed or out-of-order decisions, 0 without"
    LABELS "plugin;cli;bench" PROPERTIES DEPENDS test_hot_reload)
  ncclbpf_add_test(NAME cli_bench COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/cli_bench.sh
    $<TARGET_FILE:ncclbpf> ${NCCLBPF_POLICY_DIR}
    OUTPUT "cli_bench: all checks passed" LABELS "plugin;cli;bench" TIMEOUT 120)
endif()

if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME cli_demo COMMAND $<TARGET_FILE:ncclbpf> demo
    OUTPUT "unsafe/div_zero +rejected +program 'div_zero' \\(section 'tuner'\\): line 11.*call 60: hot reload.*active as version.*130 calls replayed.*size_aware +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ \\[[-+][0-9.]+, [-+][0-9.]+\\]"
    NOT_OUTPUT "REJECTED|not loaded" LABELS "plugin;cli" TIMEOUT 120)
endif()

if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_test(test_map_carry SOURCES ${PLUGIN_TEST_DIR}/test_map_carry.c
    ARGS ${PROJECT_BINARY_DIR}/benchmarks/policies/two_lookups.o ${NCCLBPF_POLICY_DIR}/size_aware.o
    LABELS plugin TIMEOUT 60)
  target_link_libraries(test_map_carry PRIVATE ncclbpf_runtime)
  add_dependencies(test_map_carry tuner_bench_policies policies)
  if(TARGET test_map_carry_asan)
    target_link_libraries(test_map_carry_asan PRIVATE ncclbpf_runtime_asan)
    add_dependencies(test_map_carry_asan tuner_bench_policies policies)
  endif()
endif()

# Per-communicator maps through the runtime's hot path: two interleaved communicators decide
# as each would alone (also across a hot reload); the same policy with a plain ARRAY (built here
# with -DEXPLORE_MAP_FLAGS=0) does not load.
if(NCCLBPF_BUILD_POLICIES)
  set(EXPLORE_PLAIN ${CMAKE_CURRENT_BINARY_DIR}/explore_protocols_plain.o)
  add_custom_command(OUTPUT ${EXPLORE_PLAIN}
    COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS}
            -DEXPLORE_MAP_FLAGS=0
            -c ${PROJECT_SOURCE_DIR}/policies/explore_protocols.c -o ${EXPLORE_PLAIN}
    DEPENDS ${PROJECT_SOURCE_DIR}/policies/explore_protocols.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    COMMENT "BPF policies/explore_protocols.c with a plain ARRAY")
  add_custom_target(explore_plain_policy ALL DEPENDS ${EXPLORE_PLAIN})
  ncclbpf_test(test_comm_maps SOURCES ${PLUGIN_TEST_DIR}/test_comm_maps.c
    ARGS ${NCCLBPF_POLICY_DIR}/explore_protocols.o ${EXPLORE_PLAIN} LABELS plugin TIMEOUT 60)
  foreach(t test_comm_maps test_comm_maps_asan)
    if(TARGET ${t})
      target_link_libraries(${t} PRIVATE ncclbpf_runtime$<$<STREQUAL:${t},test_comm_maps_asan>:_asan>)
      add_dependencies(${t} policies explore_plain_policy)
    endif()
  endforeach()
endif()

# The stress tests' second phase uses the version bundles.
if(TARGET version_policies)
  foreach(t test_reload_stress test_reload_stress_asan test_reload_stress_tsan)
    if(TARGET ${t})
      add_dependencies(${t} version_policies)
    endif()
  endforeach()
endif()

# The trace recorded on an H200 with stock NCCL 2.28.9 and size_aware.o (docs/gpu-results.md):
# replaying it through the plugin with the same policy reproduces every decision NCCL got.
set(RECORDED_TRACE ${PROJECT_SOURCE_DIR}/adapters/nccl/traces/h200-4rank-socket.trace)
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME cli_replay_recorded_same_policy COMMAND $<TARGET_FILE:ncclbpf> replay
    ${RECORDED_TRACE} --policy ${NCCLBPF_POLICY_DIR}/size_aware.o
    OUTPUT "208 calls replayed, 0 decisions differ" LABELS "plugin;cli")
endif()
