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
  set_tests_properties(test_net.asan PROPERTIES
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
foreach(t ${NET_VARIANTS})
  target_include_directories(${t} PRIVATE ${NCCL_ADAPTER_INCLUDES} ${NET_TEST_DIR})
  add_dependencies(${t} nccl_ncclbpf nccl_net_fake)
endforeach()
if(TARGET test_net_asan)
  add_dependencies(test_net_asan nccl_ncclbpf_asan)
endif()

# Test-only policies.
set(NET_POLICY_DIR ${PROJECT_BINARY_DIR}/tests/net/policies)
set(NET_BPF_CFLAGS -O2 -g -target bpf -mcpu=v3 -Wall -Werror -I${PROJECT_SOURCE_DIR}/include)
if(NCCLBPF_BUILD_POLICIES)
  set(NET_POLICIES)
  foreach(p deny probe)
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

# net_case(NAME [ENV var=value;...] ARGS ...): one test per plugin variant.
function(net_case name)
  cmake_parse_arguments(C "" "" "ENV;ARGS" ${ARGN})
  foreach(t ${NET_VARIANTS})
    if(t STREQUAL "test_net")
      set(tn net_${name})
      set(lib $<TARGET_FILE:nccl_ncclbpf>)
      set(env "NCCLBPF_WATCH=0")
    else()
      set(tn net_${name}.asan)
      set(lib $<TARGET_FILE:nccl_ncclbpf_asan>)
      set(env "NCCLBPF_WATCH=0;ASAN_OPTIONS=detect_leaks=1:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
    endif()
    if(C_ENV)
      list(APPEND env ${C_ENV})
    endif()
    add_test(NAME ${tn} COMMAND ${t} ${lib} ${C_ARGS})
    set_tests_properties(${tn} PROPERTIES LABELS net TIMEOUT 300 ENVIRONMENT "${env}"
      PASS_REGULAR_EXPRESSION "\nOK\n?$|^OK\n?$")
  endforeach()
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
  net_case(pace ARGS pace ${NET_POLICY_DIR}/pace100.o 100)
  # The shipped policies attached to a real exchange: loopback is on the allow-list; the
  # counters run on every completion of a 4-rank ring.
  net_case(ring2_allow ARGS ring 2 12
    ENV "NCCLBPF_POLICY=${NCCLBPF_POLICY_DIR}/net_allow.o;NCCL_SOCKET_IFNAME=lo")
  net_case(ring4_counters ARGS ring 4 12
    ENV "NCCLBPF_POLICY=${NCCLBPF_POLICY_DIR}/net_counters.o")
endif()

# The shipped net policies' unit tests, as an author would write them with `ncclbpf test-run`.
if(NCCLBPF_BUILD_POLICIES AND TARGET ncclbpf)
  function(net_tr name regex)
    add_test(NAME net_tr_${name} COMMAND ncclbpf test-run ${ARGN})
    set_tests_properties(net_tr_${name} PROPERTIES LABELS "net;cli" TIMEOUT 60
      PASS_REGULAR_EXPRESSION "${regex}")
  endfunction()
  set(P ${NCCLBPF_POLICY_DIR})
  # counters: a 1 MiB send completion of 5000 ns from 127.0.0.1 on device 1; a receive.
  net_tr(counters_send
    "net_peers: added +key 7f000001 00000000 00000000 00000000 01000000 00000000\n +value 01000000 00000000 00001000 00000000 88130000 00000000 88130000 00000000 00000000 00000000 00000000 00000000 00000000"
    ${P}/net_counters.o --prog net_counters
    --ctx op=5,bytes=1048576,duration_ns=5000,peer_addr[0]=0x0100007f,dev=1)
  net_tr(counters_recv
    "value 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 01000000 00000000 40000000 00000000 07000000 00000000 07000000 00000000"
    ${P}/net_counters.o --prog net_counters --ctx op=6,bytes=64,duration_ns=7)
  # allow: loopback admitted, an unlisted address refused and counted, unknown peer admitted.
  net_tr(allow_loopback "return 0\n.*maps changed:\n  \\(none\\)"
    ${P}/net_allow.o --prog allow_accept --ctx op=2,peer_addr[0]=0x0100007f,peer_port=4000)
  net_tr(allow_refused "return 1\n.*net_refused: added +key 0a000005 .*\n +value 01000000 00000000"
    ${P}/net_allow.o --prog allow_connect --ctx op=1,peer_addr[0]=0x0500000a,peer_port=4000)
  net_tr(allow_unknown "return 0\n" ${P}/net_allow.o --prog allow_connect --ctx op=1)
  # pace: large messages at the default 1000 MB/s, small ones unpaced.
  net_tr(pace_large "return 1000 " ${P}/net_pace.o --prog net_pace --ctx op=3,bytes=1048576)
  net_tr(pace_small "return 0\n" ${P}/net_pace.o --prog net_pace --ctx op=3,bytes=4096)
endif()
