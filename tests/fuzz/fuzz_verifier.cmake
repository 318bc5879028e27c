# libFuzzer target over the verifier (also a soundness oracle: accepted programs run in the
# bounds-checking interpreter). Reuses the fuzz engine build of fuzz.cmake. CTest runs it for
# ~20 s; run it for hours by hand (command in fuzz_verifier.c).
if(NCCLBPF_FUZZ AND TARGET ncclbpf_engine_fuzz)
  add_executable(fuzz_verifier ${CMAKE_CURRENT_LIST_DIR}/fuzz_verifier.c)
  target_compile_options(fuzz_verifier PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_verifier PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_verifier PRIVATE ncclbpf_engine_fuzz)
  set(FUZZ_VCORPUS ${PROJECT_BINARY_DIR}/tests/fuzz/corpus_verifier)
  file(MAKE_DIRECTORY ${FUZZ_VCORPUS})
  add_test(NAME fuzz_verifier_bounded
    COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
            $<TARGET_FILE:fuzz_verifier> -seed=1 -max_total_time=20 -rss_limit_mb=2048 -timeout=10
            -artifact_prefix=${PROJECT_BINARY_DIR}/tests/fuzz/
            -max_len=4098 -print_final_stats=1 ${FUZZ_VCORPUS})
  set_tests_properties(fuzz_verifier_bounded PROPERTIES LABELS "fuzz;verifier" TIMEOUT 90)
endif()
