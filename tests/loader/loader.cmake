# Loader tests: BPF test objects compiled here (features and one per rejected construct), the
# loader unit test over them and the shipped policies, the mutation test (0-byte, truncated and
# bit-flipped variants of every object, clean rejection under ASan), and the SDK header checks.
if(NCCLBPF_BUILD_POLICIES)
  set(LDR_BPF_CFLAGS ${NCCLBPF_BPF_TEST_CFLAGS})
  set(LDR_BPF_DIR ${PROJECT_BINARY_DIR}/tests/loader/bpf)
  file(GLOB LDR_BPF_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/bpf/*.c)
  set(LDR_BPF_OBJECTS)
  foreach(src ${LDR_BPF_SOURCES})
    get_filename_component(n ${src} NAME_WE)
    set(out ${LDR_BPF_DIR}/${n}.o)
    set(flags ${LDR_BPF_CFLAGS})
    if(n STREQUAL "bad_no_btf_maps")
      list(REMOVE_ITEM flags -g) # the point of this object: maps without BTF
    endif()
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${LDR_BPF_DIR}
      COMMAND ${NCCLBPF_CLANG} ${flags} -c ${src} -o ${out}
      DEPENDS ${src} ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
      COMMENT "BPF tests/loader/bpf/${n}.c")
    list(APPEND LDR_BPF_OBJECTS ${out})
  endforeach()
  add_custom_target(loader_test_objects ALL DEPENDS ${LDR_BPF_OBJECTS})

  ncclbpf_test(test_loader SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_loader.c
    ARGS ${LDR_BPF_DIR} ${NCCLBPF_POLICY_DIR} TIMEOUT 60 LABELS loader)
  # Bundle limits and structural rules, before anything is created or verified (engine rule,
  # runtime limits, NCCLBPF_MAX_MAP_BYTES).
  ncclbpf_test(test_limits SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_limits.c
    ARGS ${LDR_BPF_DIR} TIMEOUT 60 LABELS loader)
  foreach(t test_limits test_limits_asan)
    if(TARGET ${t})
      add_dependencies(${t} loader_test_objects)
    endif()
  endforeach()
  target_link_libraries(test_limits PRIVATE ncclbpf_runtime)
  if(TARGET test_limits_asan)
    target_link_libraries(test_limits_asan PRIVATE ncclbpf_runtime_asan)
  endif()
  # Map contents as JSON typed by BTF (ebpf_object_map__json), exactly, on bpf/btf_values.c.
  ncclbpf_test(test_btf_json SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_btf_json.c
    ARGS ${LDR_BPF_DIR} TIMEOUT 60 LABELS loader)
  foreach(t test_btf_json test_btf_json_asan)
    if(TARGET ${t})
      add_dependencies(${t} loader_test_objects)
    endif()
  endforeach()
  # One program, one test per seed directory so that they run in parallel.
  # The sections of the one program-type table: every message lists them all, the runtime
  # serves each (test_sections.c).
  ncclbpf_test(test_sections SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sections.c
    ARGS ${LDR_BPF_DIR}/bad_section.o TIMEOUT 60 LABELS loader)
  target_link_libraries(test_sections PRIVATE ncclbpf_runtime)
  if(TARGET test_sections_asan)
    target_link_libraries(test_sections_asan PRIVATE ncclbpf_runtime_asan)
  endif()
  foreach(t test_sections test_sections_asan)
    if(TARGET ${t})
      add_dependencies(${t} loader_test_objects)
    endif()
  endforeach()
  ncclbpf_test(test_loader_mutate SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_loader_mutate.c
    ARGS ${LDR_BPF_DIR} TIMEOUT 120 LABELS loader)
  foreach(part policies unsafe)
    set(dir ${NCCLBPF_POLICY_DIR})
    if(part STREQUAL "unsafe")
      set(dir ${NCCLBPF_POLICY_DIR}/unsafe)
    endif()
    ncclbpf_add_twin_test(NAME test_loader_mutate_${part}
      COMMAND $<TARGET_FILE:test_loader_mutate> ${dir} TIMEOUT 120 LABELS loader)
  endforeach()

  # The SDK header compiles for BPF with every warning an error, using everything it offers.
  ncclbpf_add_test(NAME sdk_header_bpf
    COMMAND ${NCCLBPF_CLANG} ${LDR_BPF_CFLAGS} -Wextra -c ${CMAKE_CURRENT_LIST_DIR}/sdk_all.c
            -o ${PROJECT_BINARY_DIR}/tests/loader/sdk_all.o
    LABELS loader TIMEOUT 60)
endif()
# ... and on the host (gcc, -Wall -Wextra -Werror -pedantic): layouts and constants.
ncclbpf_test(test_sdk_host SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sdk_host.c LABELS loader)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/test_sdk_host.c PROPERTIES COMPILE_OPTIONS "-pedantic")
