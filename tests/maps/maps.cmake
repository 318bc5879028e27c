# Map tests that need more than a unit test: the kernel differential (bpf() as root; it prints
# SKIP and passes where refused) and the multi-threaded stress built with ThreadSanitizer.
if(NCCLBPF_KERNEL_TESTS)
  ncclbpf_test(test_maps_kernel SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_maps_kernel.c
    ARGS 20000 ASAN_ARGS 5000 TIMEOUT 120 LABELS maps kernel)
endif()
