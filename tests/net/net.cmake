# Net plugin tests (tests/net/test_net.c): ranks as forked processes over loopback TCP, driving
# the exported ncclNetPlugin_v11/v12 tables as NCCL's proxy does; a fake inner plugin for
# delegation; test policies (deny, probe, pace at 100 MB/s); `ncclbpf test-run` cases for the
# shipped net policies. Every case also runs against the ASan+UBSan plugin when sanitizers are on.
set(NET_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

add_library(nccl_net_fake SHARED ${NET_TEST_DIR}/fake_inner.c)
target_include_directories(nccl_net_fake PRIVATE ${NCCL_ADAPTER_INCLUDES})
target_compile_options(nccl_net_fake PRIVATE -fvisibility=hidden -Wno-unused-parameter)
set_target_properties(nccl_net_fake PROPERTIES OUTPUT_NAME nccl-net-fake
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/net)

set(NET_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf> ring 2 12)
if(NCCLBPF_SANITIZERS)
  set(NET_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf_asan> ring 2 12)
endif()
ncclbpf_test(test_net SOURCES ${NET_TEST_DIR}/test_net.c LIBS dl pthread
  ARGS $<TARGET_FILE:nccl_ncclbpf> ring 2 12 ASAN_ARGS ${NET_ASAN_ARGS}
  LABELS net TIMEOUT 300)
set(NET_VARIANTS test_net)
if(TARGET test_net_asan)
  list(APPEND NET_VARIANTS test_net_asan)
endif()
foreach(t ${NET_VARIANTS})
  target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${NET_TEST_DIR})
  add_dependencies(${t} nccl_ncclbpf nccl_net_fake)
endforeach()
if(TARGET test_net_asan)
  add_dependencies(test_net_asan nccl_ncclbpf_asan)
endif()

# The listener's pending queue (idle connections, the set-up deadline, per-address cap) and the
# handle's checks, against the plugin as NCCL loads it, over loopback.
set(NET_PENDING_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf>)
if(NCCLBPF_SANITIZERS)
  set(NET_PENDING_ASAN_ARGS $<TARGET_FILE:nccl_ncclbpf_asan>)
endif()
ncclbpf_test(test_net_pending SOURCES ${NET_TEST_DIR}/test_net_pending.c LIBS dl pthread
  ARGS $<TARGET_FILE:nccl_ncclbpf> ASAN_ARGS ${NET_PENDING_ASAN_ARGS} LABELS net TIMEOUT 300
  ENVIRONMENT NCCL_SOCKET_IFNAME=lo NCCL_SOCKET_FAMILY=AF_INET NCCLBPF_WATCH=0)
foreach(t test_net_pending test_net_pending_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${NET_TEST_DIR})
    add_dependencies(${t} nccl_ncclbpf)
  endif()
endforeach()
if(TARGET test_net_pending_asan)
  add_dependencies(test_net_pending_asan nccl_ncclbpf_asan)
endif()

# Test-only policies.
set(NET_POLICY_DIR ${PROJECT_BINARY_DIR}/tests/net/policies)
set(NET_BPF_CFLAGS ${NCCLBPF_BPF_TEST_CFLAGS})
if(NCCLBPF_BUILD_POLICIES)
  set(NET_POLICIES)
  foreach(p deny probe probe_complete clk_bytes clk_duration clk_time clk_sampled bad_section
      bad_every0 bad_every_big)
    set(out ${NET_POLICY_DIR}/${p}.o)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${NET_POLICY_DIR}
      COMMAND ${NCCLBPF_CLANG} ${NET_BPF_CFLAGS} -c ${NET_TEST_DIR}/policies/${p}.c -o ${out}
      DEPENDS ${NET_TEST_DIR}/policies/${p}.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
      COMMENT "BPF tests/net/policies/${p}.c")
    list(APPEND NET_POLICIES ${out})
  endforeach()
  set(out ${NET_POLICY_DIR}/pace100.o)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${NET_POLICY_DIR}
    COMMAND ${NCCLBPF_CLANG} ${NET_BPF_CFLAGS} -DNET_PACE_MBPS=100
            -c ${PROJECT_SOURCE_DIR}/policies/net_pace.c -o ${out}
    DEPENDS ${PROJECT_SOURCE_DIR}/policies/net_pace.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
    COMMENT "BPF policies/net_pace.c at 100 MB/s")
  list(APPEND NET_POLICIES ${out})
  add_custom_target(net_test_policies ALL DEPENDS ${NET_POLICIES})
  foreach(t ${NET_VARIANTS})
    add_dependencies(${t} net_test_policies policies)
  endforeach()
endif()

# The clock is read only for programs that may read time_ns/duration_ns (the runtime's
# ncclbpf_rt_net_event, linked in directly, on the clk_* test policies).
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_test(test_net_clock SOURCES ${NET_TEST_DIR}/test_net_clock.c
    ARGS ${NET_POLICY_DIR}/clk_bytes.o ${NET_POLICY_DIR}/clk_duration.o ${NET_POLICY_DIR}/clk_time.o
    LABELS net TIMEOUT 60)
  target_link_libraries(test_net_clock PRIVATE ncclbpf_runtime)
  add_dependencies(test_net_clock net_test_policies)
  if(TARGET test_net_clock_asan)
    target_link_libraries(test_net_clock_asan PRIVATE ncclbpf_runtime_asan)
    add_dependencies(test_net_clock_asan net_test_policies)
  endif()
  # Posting stamps from the TSC (forced, skipped without an invariant TSC) and without it.
  foreach(m tsc notsc)
    ncclbpf_add_test(NAME test_net_clock.${m} COMMAND test_net_clock ${NET_POLICY_DIR}/clk_bytes.o
      ${NET_POLICY_DIR}/clk_duration.o ${NET_POLICY_DIR}/clk_time.o ${m} LABELS net TIMEOUT 60)
  endforeach()
endif()

# The token bucket behind net/isend pacing (adapter source compiled in, runtime linked).
ncclbpf_test(test_net_pace SOURCES ${NET_TEST_DIR}/test_net_pace.c
  ${PROJECT_SOURCE_DIR}/adapters/nccl/src/net_hooks.c ${PROJECT_SOURCE_DIR}/adapters/nccl/src/net_log.c
  LABELS net TIMEOUT 30)
foreach(t test_net_pace test_net_pace_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES})
  endif()
endforeach()
target_link_libraries(test_net_pace PRIVATE ncclbpf_runtime)
if(TARGET test_net_pace_asan)
  target_link_libraries(test_net_pace_asan PRIVATE ncclbpf_runtime_asan)
endif()

# Completion programs run off NCCL's path from a per-communicator queue (runtime net_defer.c):
# queued with their own time, run by the drain thread, full queues, flushes, reloads and puts.
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_test(test_net_defer SOURCES ${NET_TEST_DIR}/test_net_defer.c LIBS pthread
    ARGS ${NCCLBPF_POLICY_DIR}/net_counters.o LABELS net TIMEOUT 120)
  target_link_libraries(test_net_defer PRIVATE ncclbpf_runtime)
  add_dependencies(test_net_defer policies)
  if(TARGET test_net_defer_asan)
    target_link_libraries(test_net_defer_asan PRIVATE ncclbpf_runtime_asan)
    add_dependencies(test_net_defer_asan policies)
  endif()
endif()

# net_case(NAME [ENV var=value;...] ARGS ...): one test per plugin variant (net_NAME and its
# ASan twin net_NAME.asan); the driver prints OK last.
function(net_case name)
  cmake_parse_arguments(C "" "" "ENV;ARGS" ${ARGN})
  ncclbpf_add_twin_test(NAME net_${name} COMMAND $<TARGET_FILE:test_net> $<TARGET_FILE:nccl_ncclbpf>
    ${C_ARGS} OUTPUT "\nOK\n?$|^OK\n?$" LABELS net TIMEOUT 300
    ENVIRONMENT NCCLBPF_WATCH=0 ${C_ENV})
endfunction()

net_case(ring2_v11 ARGS ring 2 11)
net_case(ring4 ARGS ring 4 12)
net_case(ring2_1sock ARGS ring 2 12 ENV "NCCLBPF_NET_NSOCKS=1")
net_case(multirecv ARGS multirecv)
net_case(killed ARGS killed)
net_case(api ARGS api)
net_case(quiet ARGS quiet)
net_case(inner ARGS inner $<TARGET_FILE:nccl_net_fake>)
if(NCCLBPF_BUILD_POLICIES)
  net_case(refuse ARGS refuse 0 ${NET_POLICY_DIR}/deny.o)
  net_case(inner_deny ARGS inner $<TARGET_FILE:nccl_net_fake> ${NET_POLICY_DIR}/deny.o)
  net_case(probe ARGS probe ${NET_POLICY_DIR}/probe.o ${CMAKE_CURRENT_BINARY_DIR}
    ENV "NCCL_SOCKET_IFNAME=lo")
  net_case(probe_complete ARGS probe_complete ${NET_POLICY_DIR}/probe_complete.o
    ${CMAKE_CURRENT_BINARY_DIR})
  net_case(pace ARGS pace ${NET_POLICY_DIR}/pace100.o 100)
  # The shipped policies attached to a real exchange: loopback is on the allow-list; the
  # counters run on every completion of a 4-rank ring.
  net_case(ring2_allow ARGS ring 2 12
    ENV "NCCLBPF_POLICY=${NCCLBPF_POLICY_DIR}/net_allow.o;NCCL_SOCKET_IFNAME=lo")
  net_case(ring4_counters ARGS ring 4 12
    ENV "NCCLBPF_POLICY=${NCCLBPF_POLICY_DIR}/net_counters.o")
  # NCCLBPF_TRACE records every net event of a real exchange (net_trace_check.py checks them
  # against what the run did); net_allow runs on connect/accept, so only those carry ret=.
  ncclbpf_add_twin_test(NAME net_trace_record COMMAND bash ${NET_TEST_DIR}/net_trace_record.sh
    $<TARGET_FILE:test_net> $<TARGET_FILE:nccl_ncclbpf> ${NCCLBPF_POLICY_DIR}/net_allow.o
    ${CMAKE_CURRENT_BINARY_DIR}/net_trace<TWIN>.txt connect accept
    OUTPUT "net_trace_record: OK" LABELS net TIMEOUT 300)
  # `ncclbpf replay` drives the net programs over such traces: net_counters' map equals what the
  # trace's completions add up to; net_allow reproduces every recorded connect/accept result,
  # deny (tests' deny.c) differs on each.
  if(TARGET ncclbpf)
    ncclbpf_add_twin_test(NAME net_replay_counters COMMAND bash ${NET_TEST_DIR}/net_replay.sh
      $<TARGET_FILE:test_net> $<TARGET_FILE:nccl_ncclbpf> $<TARGET_FILE:ncclbpf>
      ${NCCLBPF_POLICY_DIR}/net_counters.o ${CMAKE_CURRENT_BINARY_DIR}/net_replay_counters<TWIN>.txt
      - ${NCCLBPF_POLICY_DIR}/net_counters.o=counters
      OUTPUT "net_replay: OK" LABELS "net;cli" TIMEOUT 300)
    ncclbpf_add_twin_test(NAME net_replay_allow COMMAND bash ${NET_TEST_DIR}/net_replay.sh
      $<TARGET_FILE:test_net> $<TARGET_FILE:nccl_ncclbpf> $<TARGET_FILE:ncclbpf>
      ${NCCLBPF_POLICY_DIR}/net_allow.o ${CMAKE_CURRENT_BINARY_DIR}/net_replay_allow<TWIN>.txt
      "connect accept" ${NCCLBPF_POLICY_DIR}/net_allow.o=allow ${NET_POLICY_DIR}/deny.o=deny
      ${NCCLBPF_POLICY_DIR}/net_counters.o=counters
      OUTPUT "net_replay: OK" LABELS "net;cli" TIMEOUT 300)
    # Tuner calls (test_trace's recording) and net events in one trace.
    ncclbpf_add_test(NAME net_replay_mixed COMMAND bash ${NET_TEST_DIR}/net_replay_mixed.sh
      $<TARGET_FILE:ncclbpf> $<TARGET_FILE:nccl_ncclbpf> ${NCCLBPF_POLICY_DIR}/net_counters.o
      ${CMAKE_CURRENT_BINARY_DIR}/plugin_trace.txt
      ${CMAKE_CURRENT_BINARY_DIR}/net_replay_counters.txt
      ${CMAKE_CURRENT_BINARY_DIR}/net_replay_mixed.txt
      OUTPUT "net_replay_mixed: OK" LABELS "net;cli" TIMEOUT 120)
    set_tests_properties(net_replay_mixed PROPERTIES DEPENDS "test_trace;net_replay_counters")
  endif()
  # Load/unload cycles with overlapping communicators leave no thread behind (drain thread).
  net_case(cycles ARGS cycles ${NCCLBPF_POLICY_DIR}/net_counters.o)
  if(TARGET ncclbpf)
    net_case(defer ARGS defer ${NCCLBPF_POLICY_DIR}/net_counters.o $<TARGET_FILE:ncclbpf>)
    net_case(defer_nodrain ARGS nodrain ${NCCLBPF_POLICY_DIR}/net_counters.o $<TARGET_FILE:ncclbpf>)
    net_case(defer_inline ARGS inline ${NCCLBPF_POLICY_DIR}/net_counters.o $<TARGET_FILE:ncclbpf>)
    net_case(time_sampled ARGS sample ${NCCLBPF_POLICY_DIR}/net_counters.o $<TARGET_FILE:ncclbpf>)
  endif()
endif()

# The shipped net policies' unit tests, as an author would write them with `ncclbpf test-run`.
if(NCCLBPF_BUILD_POLICIES AND TARGET ncclbpf)
  function(net_tr name regex)
    ncclbpf_add_test(NAME net_tr_${name} COMMAND $<TARGET_FILE:ncclbpf> test-run ${ARGN}
      OUTPUT "${regex}" LABELS "net;cli" TIMEOUT 60)
  endfunction()
  set(P ${NCCLBPF_POLICY_DIR})
  # counters: a 1 MiB send completion of 5000 ns from 127.0.0.1 on device 1 (timed); a receive
  # of 7 ns; an untimed receive (duration 0: sampled timing) counts but adds no latency.
  net_tr(counters_send
    "net_peers: added +key 7f000001 00000000 00000000 00000000 01000000 00000000\n +value 01000000 00000000 00001000 00000000 88130000 00000000 88130000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 01000000 00000000 00000000 00000000\n"
    ${P}/net_counters.o --prog net_counters
    --ctx op=5,bytes=1048576,duration_ns=5000,peer_addr[0]=0x0100007f,dev=1)
  net_tr(counters_recv
    "value 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 01000000 00000000 40000000 00000000 07000000 00000000 07000000 00000000 00000000 00000000 01000000 00000000\n"
    ${P}/net_counters.o --prog net_counters --ctx op=6,bytes=64,duration_ns=7)
  net_tr(counters_untimed
    "value 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 01000000 00000000 40000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
    ${P}/net_counters.o --prog net_counters --ctx op=6,bytes=64)
  # allow: loopback admitted, an unlisted address refused and counted, unknown peer admitted.
  net_tr(allow_loopback "return 0\n.*maps changed:\n  \\(none\\)"
    ${P}/net_allow.o --prog allow_accept --ctx op=2,peer_addr[0]=0x0100007f,peer_port=4000)
  net_tr(allow_refused "return 1\n.*net_refused: added +key 0a000005 .*\n +value 01000000 00000000"
    ${P}/net_allow.o --prog allow_connect --ctx op=1,peer_addr[0]=0x0500000a,peer_port=4000)
  net_tr(allow_unknown "return 0\n" ${P}/net_allow.o --prog allow_connect --ctx op=1)
  # pace: large messages at the default 1000 MB/s, small ones unpaced.
  net_tr(pace_large "return 1000 " ${P}/net_pace.o --prog net_pace --ctx op=3,bytes=1048576)
  net_tr(pace_small "return 0\n" ${P}/net_pace.o --prog net_pace --ctx op=3,bytes=4096)
  # `ncclbpf verify` refuses what the plugin would refuse to load (a section no hook serves),
  # exit status 1, and accepts the sampled completion section.
  foreach(bad bad_section:net/complte bad_every0:net/complete/time_every=0)
    string(REPLACE ":" ";" b ${bad})
    list(GET b 0 obj)
    list(GET b 1 sec)
    ncclbpf_add_test(NAME net_verify_${obj} COMMAND $<TARGET_FILE:ncclbpf> verify
      ${NET_POLICY_DIR}/${obj}.o STATUS 1
      OUTPUT "REJECTED: no hook serves SEC\\(\"${sec}\"\\)" LABELS "net;cli" TIMEOUT 60)
  endforeach()
  ncclbpf_add_test(NAME net_verify_sampled COMMAND $<TARGET_FILE:ncclbpf> verify
    ${NET_POLICY_DIR}/clk_sampled.o
    OUTPUT "clk_sampled +net/complete/time_every=4 +accepted [^\n]* duration_ns/4"
    LABELS "net;cli" TIMEOUT 60)
endif()

# ThreadSanitizer twin of the transport test (the pattern of profiler.cmake's stress twin): the
# plugin library (adapter, runtime, engine) and the driver compiled with TSan. The driver calls
# set-up on one thread and data on another, as NCCL's proxy does, and the transport adds its
# helper threads; hooks run on all of them.
if(NCCLBPF_SANITIZERS)
  file(GLOB_RECURSE NET_TSAN_ENGINE CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/src/*.c)
  list(FILTER NET_TSAN_ENGINE EXCLUDE REGEX "/src/jit/arch_[^/]*/")
  file(GLOB NET_TSAN_JIT CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/engine/src/jit/arch_${NCCLBPF_JIT_ARCH}/*.c)
  add_library(nccl_ncclbpf_tsan SHARED ${NCCL_ADAPTER_SOURCES} ${NCCLBPF_RUNTIME_SOURCES}
    ${NET_TSAN_ENGINE} ${NET_TSAN_JIT})
  target_include_directories(nccl_ncclbpf_tsan PRIVATE ${NCCL_ADAPTER_INCLUDES}
    ${PROJECT_SOURCE_DIR}/runtime/include ${PROJECT_SOURCE_DIR}/runtime/src
    ${PROJECT_SOURCE_DIR}/engine/include ${PROJECT_SOURCE_DIR}/engine/src
    ${PROJECT_SOURCE_DIR}/include)
  if(NOT NCCLBPF_JIT_ARCH STREQUAL "none")
    target_compile_definitions(nccl_ncclbpf_tsan PRIVATE NCCLBPF_HAVE_JIT=1)
  endif()
  target_compile_options(nccl_ncclbpf_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer
    -fvisibility=hidden)
  target_link_options(nccl_ncclbpf_tsan PRIVATE -fsanitize=thread
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/adapters/nccl/exports.map -Wl,-z,nodelete)
  target_link_libraries(nccl_ncclbpf_tsan PRIVATE pthread)
  set_target_properties(nccl_ncclbpf_tsan PROPERTIES OUTPUT_NAME nccl-ncclbpf-tsan
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/net)

  add_executable(test_net_tsan ${NET_TEST_DIR}/test_net.c)
  target_include_directories(test_net_tsan PRIVATE ${NCCL_ADAPTER_INCLUDES} ${NET_TEST_DIR}
    ${PROJECT_SOURCE_DIR}/tests/common)
  target_compile_options(test_net_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(test_net_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_net_tsan PRIVATE dl pthread)
  add_dependencies(test_net_tsan nccl_ncclbpf_tsan nccl_net_fake)
  function(net_tsan_case name)
    cmake_parse_arguments(C "" "" "ENV;ARGS" ${ARGN})
    ncclbpf_add_test(NAME net_${name}.tsan
      COMMAND $<TARGET_FILE:test_net_tsan> $<TARGET_FILE:nccl_ncclbpf_tsan> ${C_ARGS}
      OUTPUT "\nOK\n?$|^OK\n?$" SANITIZER tsan LABELS net TIMEOUT 600
      ENVIRONMENT NCCLBPF_WATCH=0 ${C_ENV})
  endfunction()
  net_tsan_case(ring2 ARGS ring 2 12)
  net_tsan_case(ring2_1sock ARGS ring 2 12 ENV "NCCLBPF_NET_NSOCKS=1")
  net_tsan_case(multirecv ARGS multirecv)
  net_tsan_case(killed ARGS killed)
  net_tsan_case(inner ARGS inner $<TARGET_FILE:nccl_net_fake>)
  net_tsan_case(quiet ARGS quiet)
  if(NCCLBPF_BUILD_POLICIES)
    add_dependencies(test_net_tsan net_test_policies policies)
    net_tsan_case(ring4_counters ARGS ring 4 12
      ENV "NCCLBPF_POLICY=${NCCLBPF_POLICY_DIR}/net_counters.o")
    if(TARGET ncclbpf)
      net_tsan_case(cycles ARGS cycles ${NCCLBPF_POLICY_DIR}/net_counters.o)
      # The drain thread and inspection flushes (the server thread) race the completions.
      net_tsan_case(defer ARGS defer ${NCCLBPF_POLICY_DIR}/net_counters.o $<TARGET_FILE:ncclbpf>)
    endif()
    # No pace case: TSan slows the transport below the 100 MB/s the pace test measures.
    net_tsan_case(refuse ARGS refuse 0 ${NET_POLICY_DIR}/deny.o)
  endif()
endif()

# v11 <-> v12 net properties for a delegated plugin (adapter source compiled in).
ncclbpf_test(test_net_props SOURCES ${NET_TEST_DIR}/test_net_props.c
  ${PROJECT_SOURCE_DIR}/adapters/nccl/src/net_inner.c LIBS dl LABELS net)
foreach(t test_net_props test_net_props_asan)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES})
    target_link_libraries(${t} PRIVATE ncclbpf_runtime$<$<STREQUAL:${t},test_net_props_asan>:_asan>)
  endif()
endforeach()
