# JIT benchmark: compute kernels (one C source, compiled by gcc -O2 natively and by clang to BPF,
# one raw section per kernel), no-op call overhead and compile time, all as ratios in one run.
find_program(NCCLBPF_BENCH_CLANG NAMES clang clang-16 clang-15 clang-14)
find_program(NCCLBPF_BENCH_OBJCOPY NAMES llvm-objcopy llvm-objcopy-16 llvm-objcopy-15 llvm-objcopy-14)
if(NCCLBPF_BENCH_CLANG AND NCCLBPF_BENCH_OBJCOPY)
  set(JIT_KDIR ${PROJECT_BINARY_DIR}/benchmarks/jit_kernels)
  set(JIT_KSRC ${CMAKE_CURRENT_LIST_DIR}/jit_kernels.c)
  set(JIT_KBINS)
  set(JIT_KCMDS)
  foreach(k k_sieve k_log2 k_memcpy k_switch)
    list(APPEND JIT_KBINS ${JIT_KDIR}/${k}.bin)
    list(APPEND JIT_KCMDS COMMAND ${NCCLBPF_BENCH_OBJCOPY} -O binary --only-section=bench_${k}
      ${JIT_KDIR}/jit_kernels.bpf.o ${JIT_KDIR}/${k}.bin)
  endforeach()
  add_custom_command(OUTPUT ${JIT_KBINS}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${JIT_KDIR}
    COMMAND ${NCCLBPF_BENCH_CLANG} -O2 -target bpf -mcpu=v3 -c ${JIT_KSRC} -o ${JIT_KDIR}/jit_kernels.bpf.o
    ${JIT_KCMDS}
    DEPENDS ${JIT_KSRC}
    COMMENT "BPF benchmark kernels")
  add_custom_target(jit_bench_kernels ALL DEPENDS ${JIT_KBINS})
  add_executable(jit_bench ${CMAKE_CURRENT_LIST_DIR}/jit_bench.c ${JIT_KSRC})
  set_source_files_properties(${JIT_KSRC} PROPERTIES COMPILE_OPTIONS "-O2")
  target_link_libraries(jit_bench PRIVATE ncclbpf_runtime)
  target_include_directories(jit_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  add_dependencies(jit_bench jit_bench_kernels)
  if(BUILD_TESTING)
    if(NCCLBPF_POLICY_DIR)
      ncclbpf_add_test(NAME jit_bench_smoke COMMAND jit_bench ${JIT_KDIR} ${NCCLBPF_POLICY_DIR}
        --quick TIMEOUT 60 LABELS bench)
    else()
      ncclbpf_add_test(NAME jit_bench_smoke COMMAND jit_bench ${JIT_KDIR} --quick
        TIMEOUT 60 LABELS bench)
    endif()
  endif()
endif()
