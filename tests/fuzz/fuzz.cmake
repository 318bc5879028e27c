# libFuzzer targets (NCCLBPF_FUZZ=ON, CC=clang): the loader over its own engine build with
# coverage, ASan and UBSan. CTest runs it for ~20 s from the committed corpus
# (tests/fuzz/corpus/loader: seeds and every input that ever crashed it, README there) and every
# object the project builds; run it for hours by hand (command in fuzz_loader.c), or through
# scripts/campaign.sh.
if(NCCLBPF_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NCCLBPF_FUZZ needs clang as the C compiler (CC=clang)")
  endif()
  set(FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                 -fno-omit-frame-pointer)
  file(GLOB_RECURSE FUZZ_ENGINE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/src/*.c)
  list(FILTER FUZZ_ENGINE_SOURCES EXCLUDE REGEX "/src/jit/arch_[^/]*/")
  file(GLOB FUZZ_JIT_SOURCES CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/engine/src/jit/arch_${NCCLBPF_JIT_ARCH}/*.c)
  add_library(ncclbpf_engine_fuzz STATIC ${FUZZ_ENGINE_SOURCES} ${FUZZ_JIT_SOURCES})
  target_include_directories(ncclbpf_engine_fuzz
    PUBLIC ${PROJECT_SOURCE_DIR}/engine/include ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR}/engine/src)
  target_compile_options(ncclbpf_engine_fuzz PRIVATE ${FUZZ_FLAGS})
  target_link_libraries(ncclbpf_engine_fuzz PUBLIC pthread)
  if(NOT NCCLBPF_JIT_ARCH STREQUAL "none")
    target_compile_definitions(ncclbpf_engine_fuzz PUBLIC NCCLBPF_HAVE_JIT=1)
  endif()

  add_executable(fuzz_loader ${CMAKE_CURRENT_LIST_DIR}/fuzz_loader.c
    ${PROJECT_SOURCE_DIR}/runtime/platform/nccl_platform.c)
  target_include_directories(fuzz_loader PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
  target_compile_options(fuzz_loader PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_loader PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_loader PRIVATE ncclbpf_engine_fuzz)

  set(FUZZ_CORPUS ${PROJECT_BINARY_DIR}/tests/fuzz/corpus_loader)
  set(FUZZ_SEEDS ${CMAKE_CURRENT_LIST_DIR}/corpus/loader ${NCCLBPF_POLICY_DIR}
                 ${NCCLBPF_POLICY_DIR}/unsafe ${PROJECT_BINARY_DIR}/tests/loader/bpf)
  # libFuzzer's own status for a crash is 77 by default, which would read as a skip.
  set(NCCLBPF_FUZZ_ARGS -error_exitcode=1 -timeout_exitcode=1 -seed=1 -max_total_time=20
      -rss_limit_mb=2048 -timeout=10 -artifact_prefix=${PROJECT_BINARY_DIR}/tests/fuzz/
      -print_final_stats=1)
  ncclbpf_add_test(NAME fuzz_loader_bounded
    COMMAND $<TARGET_FILE:fuzz_loader> ${NCCLBPF_FUZZ_ARGS}
            -dict=${CMAKE_CURRENT_LIST_DIR}/loader.dict ${FUZZ_CORPUS} ${FUZZ_SEEDS}
    OUTPUT "Done [0-9]+ runs" SANITIZER asan LABELS "fuzz;loader" TIMEOUT 90)
  file(MAKE_DIRECTORY ${FUZZ_CORPUS})
endif()

# The committed corpora replayed through the targets in every build (no libFuzzer needed): a
# crash fixed once stays fixed, also under ASan.
foreach(t loader verifier)
  ncclbpf_test(fuzz_replay_${t}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/replay.c ${CMAKE_CURRENT_LIST_DIR}/fuzz_${t}.c
    ARGS ${CMAKE_CURRENT_LIST_DIR}/corpus/${t} OUTPUT "replayed [1-9][0-9]* inputs"
    LABELS "corpus;${t}" TIMEOUT 120)
endforeach()
