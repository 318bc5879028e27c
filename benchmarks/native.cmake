# Native baselines for `ncclbpf bench`: plain C plugins making the decisions of each shipped
# policy, each its own library exporting NCCL's table as a hand-written plugin would
# (benchmarks/native/). They sit in lib/ncclbpf-bench/ beside the comparison tuner (the same
# logic compiled into a copy of our adapter, tuner.cmake), where the CLI finds them from its own
# location. Benchmarks, not product.
set(NCCLBPF_BENCH_LIB_DIR ${PROJECT_BINARY_DIR}/lib/ncclbpf-bench)
foreach(name noop size_aware table_tuner two_lookups profiler_latency)
  add_library(native_${name} SHARED ${CMAKE_CURRENT_LIST_DIR}/native/native_${name}.c)
  target_link_libraries(native_${name} PRIVATE ncclbpf_nccl_abi)
  target_compile_options(native_${name} PRIVATE -O2 -fvisibility=hidden ${NCCLBPF_PREFIX_MAP})
  target_link_options(native_${name} PRIVATE -Wl,--no-undefined -Wl,-z,now)
  set_target_properties(native_${name} PROPERTIES OUTPUT_NAME nccl-native-${name} PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${NCCLBPF_BENCH_LIB_DIR})
  install(TARGETS native_${name} LIBRARY DESTINATION lib/ncclbpf-bench)
endforeach()
