# Interpreter benchmark: the same C kernels compiled natively (gcc -O2 baseline) and to eBPF
# (clang -O2 -target bpf -mcpu=v3, raw per-function sections extracted with llvm-objcopy),
# timed in one run. `interp_bench` prints the table; `interp_bench.smoke` keeps it building and
# agreeing (results of every engine must match the native ones) without timing anything.
find_program(NCCLBPF_BPF_CLANG NAMES clang-14 clang)
find_program(NCCLBPF_LLVM_OBJCOPY NAMES llvm-objcopy-14 llvm-objcopy)
if(NCCLBPF_BPF_CLANG AND NCCLBPF_LLVM_OBJCOPY)
  set(IB_SRC ${CMAKE_CURRENT_LIST_DIR}/interp)
  set(IB_OUT ${CMAKE_CURRENT_BINARY_DIR}/interp_bench_bpf)
  set(IB_NAMES sieve log2 memcpy switch crc32)
  file(MAKE_DIRECTORY ${IB_OUT})
  add_custom_command(OUTPUT ${IB_OUT}/progs.bpf.o
    COMMAND ${NCCLBPF_BPF_CLANG} -O2 -target bpf -mcpu=v3 -Wall -Werror -c ${IB_SRC}/progs.c -o ${IB_OUT}/progs.bpf.o
    DEPENDS ${IB_SRC}/progs.c ${IB_SRC}/progs.h
    COMMENT "clang -target bpf: benchmark kernels")
  set(IB_BINS)
  foreach(name ${IB_NAMES})
    add_custom_command(OUTPUT ${IB_OUT}/${name}.bin
      COMMAND ${NCCLBPF_LLVM_OBJCOPY} -O binary --only-section=bench.${name} ${IB_OUT}/progs.bpf.o ${IB_OUT}/${name}.bin
      DEPENDS ${IB_OUT}/progs.bpf.o)
    list(APPEND IB_BINS ${IB_OUT}/${name}.bin)
  endforeach()
  string(REPLACE ";" "," IB_NAMES_CSV "${IB_NAMES}")
  add_custom_command(OUTPUT ${IB_OUT}/progs_bpf.c
    COMMAND ${CMAKE_COMMAND} -DDIR=${IB_OUT} -DNAMES=${IB_NAMES_CSV} -DOUT=${IB_OUT}/progs_bpf.c -P ${IB_SRC}/bin2c.cmake
    DEPENDS ${IB_BINS} ${IB_SRC}/bin2c.cmake)
  add_executable(interp_bench ${IB_SRC}/interp_bench.c ${IB_SRC}/progs.c ${IB_OUT}/progs_bpf.c)
  target_include_directories(interp_bench PRIVATE ${IB_SRC})
  target_compile_options(interp_bench PRIVATE -O2)
  target_link_libraries(interp_bench PRIVATE ncclbpf_engine)
  if(BUILD_TESTING)
    ncclbpf_add_test(NAME interp_bench.smoke COMMAND interp_bench --quick LABELS bench TIMEOUT 60)
  endif()
else()
  message(STATUS "interp_bench: clang or llvm-objcopy not found, benchmark not built")
endif()
