# libFuzzer target over the verifier (also a soundness oracle: accepted programs run in the
# bounds-checking interpreter). Reuses the fuzz engine build of fuzz.cmake. CTest runs it for
# ~20 s from the committed corpus (tests/fuzz/corpus/verifier: seeds and every input that ever
# crashed it); run it for hours by hand (command in fuzz_verifier.c) or scripts/campaign.sh.
if(NCCLBPF_FUZZ AND TARGET ncclbpf_engine_fuzz)
  add_executable(fuzz_verifier ${CMAKE_CURRENT_LIST_DIR}/fuzz_verifier.c
    ${PROJECT_SOURCE_DIR}/runtime/platform/nccl_platform.c)
  target_include_directories(fuzz_verifier PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
  target_compile_options(fuzz_verifier PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_verifier PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_verifier PRIVATE ncclbpf_engine_fuzz)
  set(FUZZ_VCORPUS ${PROJECT_BINARY_DIR}/tests/fuzz/corpus_verifier)
  file(MAKE_DIRECTORY ${FUZZ_VCORPUS})
  ncclbpf_add_test(NAME fuzz_verifier_bounded
    COMMAND $<TARGET_FILE:fuzz_verifier> ${NCCLBPF_FUZZ_ARGS} -max_len=4098 ${FUZZ_VCORPUS}
            ${CMAKE_CURRENT_LIST_DIR}/corpus/verifier
    OUTPUT "Done [0-9]+ runs" SANITIZER asan LABELS "fuzz;verifier" TIMEOUT 90)
endif()
