# Verifier tests: the rule table (rejected programs with their messages, accepted programs run
# in the bounds-checking interpreter), unit tests of the abstract domains, soundness and kernel
# differential runs over generated programs.
ncclbpf_test(test_verifier_table
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_verifier_table.c
  LABELS verifier TIMEOUT 120)
target_include_directories(test_verifier_table PRIVATE ${CMAKE_CURRENT_LIST_DIR})
if(TARGET test_verifier_table_asan)
  target_include_directories(test_verifier_table_asan PRIVATE ${CMAKE_CURRENT_LIST_DIR})
endif()

# Soundness (and, with --kernel, the Linux differential) over generated and mutated programs,
# with maps and helpers. CI runs a bounded count; the campaign (scripts/campaign.sh) runs millions.
if(NCCLBPF_TESTGEN_SOURCES)
  ncclbpf_test(verifier_soundness
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/verifier_soundness.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 10000 --seed 1 --limit 100000 ASAN_ARGS --count 2000 --seed 77 --limit 50000
    LABELS verifier TIMEOUT 120)
  target_include_directories(verifier_soundness PRIVATE ${NCCLBPF_DIFF_DIR})
  # --seconds ends a long run early with its totals (scripts/campaign.sh SOUNDNESS_SECONDS): the
  # count here would take hours, so the line says it stopped at the limit and still sums up.
  ncclbpf_add_test(NAME verifier_soundness_seconds COMMAND verifier_soundness --count 1000000000
    --seed 9000001 --limit 100000 --seconds 1
    OUTPUT "(^|\n)stopped at the --seconds limit \\(1 s\\)" "programs [1-9][0-9]*: accepted"
    LABELS verifier TIMEOUT 60)
  if(TARGET verifier_soundness_asan)
    target_include_directories(verifier_soundness_asan PRIVATE ${NCCLBPF_DIFF_DIR})
  endif()
  # Rank consistency over generated decision programs with map reads and writes: two simulated
  # ranks (other interleavings of a second communicator, another CPU, other times) must decide
  # alike wherever the verifier accepts; the oracle check shows the comparison catches what the
  # rule prevents. Long runs: build/tests/rank_campaign --count 6000000 --progress 100000.
  ncclbpf_test(rank_campaign
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/rank_campaign.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 4000 --seed 1 ASAN_ARGS --count 800 --seed 5 LABELS verifier TIMEOUT 240)
  ncclbpf_add_test(NAME rank_campaign_oracle COMMAND rank_campaign --count 4000 --seed 1
    --oracle-check LABELS verifier TIMEOUT 240)
  foreach(t rank_campaign rank_campaign_asan)
    if(TARGET ${t})
      target_include_directories(${t} PRIVATE ${NCCLBPF_DIFF_DIR})
    endif()
  endforeach()
  if(NCCLBPF_KERNEL_TESTS)
    # Verdicts against the Linux verifier (SKIP when bpf() is refused); long runs:
    # verifier_soundness --count 100000 --kernel --no-run -v
    ncclbpf_add_test(NAME verifier_kernel_diff COMMAND verifier_soundness --count 500 --seed 5
      --kernel --no-run --limit 100000 LABELS "verifier;kernel" TIMEOUT 120)
  endif()
endif()

# Policies in C (tests/verifier/bpf/*.c), compiled with clang and loaded as the runtime loads
# them: each says in its header what must happen (accepted, rejected with which message, how
# its maps are classified for rank consistency, how cheap its verification must be).
if(NCCLBPF_BUILD_POLICIES)
  set(VOBJ_DIR ${PROJECT_BINARY_DIR}/tests/verifier/bpf)
  set(VOBJ_CFLAGS ${NCCLBPF_BPF_TEST_CFLAGS})
  file(GLOB VOBJ_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/bpf/*.c)
  set(VOBJ_OBJECTS)
  foreach(src ${VOBJ_SOURCES})
    get_filename_component(n ${src} NAME_WE)
    add_custom_command(OUTPUT ${VOBJ_DIR}/${n}.o
      COMMAND ${CMAKE_COMMAND} -E make_directory ${VOBJ_DIR}
      COMMAND ${NCCLBPF_CLANG} ${VOBJ_CFLAGS} -c ${src} -o ${VOBJ_DIR}/${n}.o
      DEPENDS ${src} ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
      COMMENT "BPF tests/verifier/bpf/${n}.c")
    list(APPEND VOBJ_OBJECTS ${VOBJ_DIR}/${n}.o)
  endforeach()
  add_custom_target(verifier_test_objects ALL DEPENDS ${VOBJ_OBJECTS})
  ncclbpf_test(test_verifier_objects
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_verifier_objects.c
    ARGS ${CMAKE_CURRENT_LIST_DIR}/bpf ${VOBJ_DIR} LABELS verifier TIMEOUT 120)
endif()

# `ncclbpf verify` on every shipped policy (accepted, exit 0), every unsafe example (rejected
# with its message, exit 1) and a missing file (exit 2); with the ASan CLI too.
if(NCCLBPF_BUILD_POLICIES AND TARGET ncclbpf)
  function(verify_cli name status regex)
    ncclbpf_add_twin_test(NAME verify_cli_${name} COMMAND $<TARGET_FILE:ncclbpf> ${ARGN}
      STATUS ${status} OUTPUT "${regex}" LABELS "verifier;cli" TIMEOUT 60)
  endfunction()
  set(P ${NCCLBPF_POLICY_DIR})
  verify_cli(noop 0 "noop\\.o +noop +tuner +accepted " verify ${P}/noop.o)
  verify_cli(size_aware 0 "size_aware\\.o +size_aware +tuner +accepted " verify ${P}/size_aware.o)
  verify_cli(table_tuner 0 "table_tuner\\.o +table_tuner +tuner +accepted " verify ${P}/table_tuner.o)
  verify_cli(profiler_latency 0 "profiler_latency +profiler/coll_end +accepted "
             verify ${P}/profiler_latency.o)
  verify_cli(log 0 "R1=ctx.*processed [0-9]+ insns" verify ${P}/size_aware.o --log)
  # the context fields a program may read, by name (the net hooks' clock reads follow them)
  verify_cli(ctx_reads 0 "net_counters +net/complete/time_every=8 +accepted [^\n]* bytes duration_ns/8 op dev peer_addr\n"
             verify ${P}/net_counters.o)
  verify_cli(ctx_reads_none 0 "noop +tuner +accepted [^\n]* none\n"
             verify ${P}/noop.o)
  verify_cli(prog_filter 0 "size_aware\\.o +size_aware +tuner +accepted " verify ${P}/size_aware.o --prog size_aware)
  verify_cli(unsafe_ctx_write 1 "line [0-9]+: .*write to read-only context field `n_bytes`"
             verify ${P}/unsafe/ctx_write_input.o)
  verify_cli(unsafe_div_zero 1 "division by zero possible" verify ${P}/unsafe/div_zero.o)
  verify_cli(unsafe_map_oob 1 "max value is outside of the allowed memory range"
             verify ${P}/unsafe/map_oob.o)
  verify_cli(unsafe_null_deref 1 "which may be NULL \\(map lookup at line [0-9]+ not checked\\)"
             verify ${P}/unsafe/null_deref.o)
  verify_cli(unsafe_ptr_to_map 1 "leaks addr into map" verify ${P}/unsafe/ptr_to_map.o)
  verify_cli(unsafe_rank_dependent 1
             "decision `algorithm` is written under a branch on a rank-local value \\(rank-local map `avg_lat`.*`avg_lat` is written by profiler program `measure` at line [0-9]+ \\(`\\*v = \\(\\*v \\* 7 \\+ ctx->duration_ns\\) / 8;`\\): it holds this rank's own measurements"
             verify ${P}/unsafe/rank_dependent.o)
  verify_cli(unsafe_rank_allowed 0 "decide +tuner +accepted "
             verify ${P}/unsafe/rank_dependent.o --allow-rank-local)
  verify_cli(unsafe_stack_overflow 1 "invalid read from stack" verify ${P}/unsafe/stack_overflow.o)
  verify_cli(unsafe_unbounded_loop 1 "program too complex" verify ${P}/unsafe/unbounded_loop.o)
  verify_cli(unsafe_unknown_helper 1 "invalid func unknown#14" verify ${P}/unsafe/unknown_helper.o)
  verify_cli(missing_file 1 "no_such_policy.o: cannot open" verify ${P}/no_such_policy.o)
  # What the plugin refuses before verifying anything (docs/security.md, Limits): the bundle's
  # usage against its limits first; the loader's limit_* objects over them, with the total and
  # the limit; two programs for one hook: the second one's row and rejection, nothing verified.
  set(L ${PROJECT_BINARY_DIR}/tests/loader/bpf)
  verify_cli(limit_usage 0
             "^[^\n]*profiler_latency.o: bundle: map memory [0-9.]+ KiB of 1 GiB \\(NCCLBPF_MAX_MAP_BYTES\\), [0-9]+ maps; programs 1 of 16; instructions [0-9]+ of 131072\n"
             verify ${P}/profiler_latency.o)
  verify_cli(limit_map_memory 1
             "map memory 8.0 GiB \\([0-9]+ bytes in 2 maps; largest 'big0' array 4.0 GiB\\) exceeds the limit of 1.0 GiB \\(1073741824 bytes\\); NCCLBPF_MAX_MAP_BYTES raises it"
             verify ${L}/limit_arrays.o)
  verify_cli(limit_hash 1 "map memory 16.0 TiB \\([0-9]+ bytes in 1 maps; largest 'grows' hash"
             verify ${L}/limit_hash.o)
  verify_cli(limit_ringbuf 1
             "ring buffer 'events' of 1.0 GiB \\(1073741824 bytes\\), over the limit of 256.0 MiB"
             verify ${L}/limit_ringbuf.o)
  ncclbpf_add_twin_test(NAME verify_cli_dup_sections
    COMMAND $<TARGET_FILE:ncclbpf> verify ${L}/dup_sections.o STATUS 1
    OUTPUT "(^|\n)ncclbpf verify: [^\n]*dup_sections.o: second \\(profiler/proxy\\): REJECTED: a second program for the hook of SEC\\(.profiler/proxy.\\) \\(the first is first\\). one program per hook\n"
           "(^|\n)[^\n]*dup_sections.o +second +profiler/proxy +rejected "
    NOT_OUTPUT "accepted" "dup_sections.o +first " LABELS "verifier;cli" TIMEOUT 60)
endif()

# Soundness of tnum/range arithmetic and branch narrowing by sampling (internal functions).
ncclbpf_test(test_verifier_domain
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_verifier_domain.c
  ARGS 300000 ASAN_ARGS 50000 LABELS verifier TIMEOUT 120)
target_include_directories(test_verifier_domain PRIVATE ${PROJECT_SOURCE_DIR}/engine/src/verifier)
if(TARGET test_verifier_domain_asan)
  target_include_directories(test_verifier_domain_asan PRIVATE ${PROJECT_SOURCE_DIR}/engine/src/verifier)
endif()

# Regressions: programs that once exposed verifier bugs (a path that died on contradictory ranges
# made pruning unsound: cost bound 53 for a 390-instruction run; an atomic fetch into r10). Their
# seeds date from before the map families: --families all reproduces them.
if(TARGET verifier_soundness)
  ncclbpf_add_twin_test(NAME verifier_regressions COMMAND $<TARGET_FILE:verifier_soundness>
    --families all --seeds 5999775,1351835,1521776,1674680,5709865 --mutate 30 --limit 20000
    LABELS verifier TIMEOUT 60)
endif()

# The verifier's arena: block reuse, the memory kept between verifications and its bound,
# concurrent verifications (also under ThreadSanitizer, arena.c on its own).
ncclbpf_test(test_verifier_arena SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_verifier_arena.c
  LIBS pthread ARGS 2000 ASAN_ARGS 500 LABELS verifier TIMEOUT 60)
target_include_directories(test_verifier_arena PRIVATE ${PROJECT_SOURCE_DIR}/engine/src/verifier)
if(TARGET test_verifier_arena_asan)
  target_include_directories(test_verifier_arena_asan PRIVATE
    ${PROJECT_SOURCE_DIR}/engine/src/verifier)
endif()
if(NCCLBPF_HAVE_TSAN)
  add_executable(test_verifier_arena_tsan ${CMAKE_CURRENT_LIST_DIR}/test_verifier_arena.c
    ${PROJECT_SOURCE_DIR}/engine/src/verifier/arena.c)
  target_include_directories(test_verifier_arena_tsan PRIVATE
    ${PROJECT_SOURCE_DIR}/engine/src/verifier ${PROJECT_SOURCE_DIR}/engine/include
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/tests/common)
  target_compile_options(test_verifier_arena_tsan PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(test_verifier_arena_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_verifier_arena_tsan PRIVATE pthread)
  ncclbpf_add_test(NAME test_verifier_arena.tsan COMMAND test_verifier_arena_tsan 500
    SANITIZER tsan LABELS verifier TIMEOUT 60)
endif()
