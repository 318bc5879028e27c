# Random program generator, kernel oracle and the differential tests built on them.
# ncclbpf_testgen is a library other test drivers (JIT vs interpreter, verifier soundness) link.
set(NCCLBPF_DIFF_DIR ${CMAKE_CURRENT_LIST_DIR})
set(NCCLBPF_TESTGEN_SOURCES ${NCCLBPF_DIFF_DIR}/gen.c ${NCCLBPF_DIFF_DIR}/kernel_oracle.c)

function(ncclbpf_testgen_lib name engine)
  add_library(${name} STATIC ${NCCLBPF_TESTGEN_SOURCES})
  target_include_directories(${name} PUBLIC ${NCCLBPF_DIFF_DIR})
  # Headers only from the engine (isa.h, disasm.h); the caller links the engine it wants.
  target_include_directories(${name} PRIVATE $<TARGET_PROPERTY:${engine},INTERFACE_INCLUDE_DIRECTORIES>)
endfunction()

# gen_print disassembles when the engine has a disassembler; a source property so that every
# target compiling gen.c in this directory (also the JIT's differential test) gets it.
if(EXISTS ${PROJECT_SOURCE_DIR}/engine/src/disasm.c)
  set_source_files_properties(${NCCLBPF_DIFF_DIR}/gen.c PROPERTIES COMPILE_DEFINITIONS NCCLBPF_HAVE_DISASM=1)
endif()

ncclbpf_testgen_lib(ncclbpf_testgen ncclbpf_engine)
if(NCCLBPF_SANITIZERS)
  ncclbpf_testgen_lib(ncclbpf_testgen_asan ncclbpf_engine_asan)
  target_compile_options(ncclbpf_testgen_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
endif()

ncclbpf_test(test_gen SOURCES ${NCCLBPF_DIFF_DIR}/test_gen.c ${NCCLBPF_DIFF_DIR}/gen.c
  LABELS unit TIMEOUT 60)

if(NCCLBPF_KERNEL_TESTS)
  # Kernel oracle sanity: the kernel's verifier accepts (nearly) everything the generator makes.
  ncclbpf_test(diff_kernel_accept SOURCES ${NCCLBPF_DIFF_DIR}/kernel_accept.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 3000 --seed 1 ASAN_ARGS --count 500 --seed 7 LABELS kernel TIMEOUT 60)
endif()

if(NCCLBPF_KERNEL_TESTS)
  # Interpreter vs kernel, bounded for CI; the same binary runs millions with --count.
  ncclbpf_test(diff_interp_kernel SOURCES ${NCCLBPF_DIFF_DIR}/diff_interp_kernel.c ${NCCLBPF_TESTGEN_SOURCES}
    ARGS --count 6000 --seed 20261202 ASAN_ARGS --count 2000 --seed 977 LABELS kernel TIMEOUT 120)
endif()
