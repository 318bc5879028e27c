# Helpers that keep per-component CMake short: every component adds its sources and tests with
# these, and gets the sanitizer variants for free.

# ncclbpf_test(NAME SOURCES a.c b.c [LIBS ...] [ARGS ...] [TIMEOUT s] [NO_SANITIZE] [LABELS ...])
# Builds NAME against the engine and registers it; with NCCLBPF_SANITIZERS also NAME_asan against
# the ASan+UBSan engine, registered as NAME.asan.
function(ncclbpf_test name)
  cmake_parse_arguments(T "NO_SANITIZE" "TIMEOUT" "SOURCES;LIBS;ARGS;ASAN_ARGS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ncclbpf_engine ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
  if(NCCLBPF_SANITIZERS AND NOT T_NO_SANITIZE)
    if(NOT T_ASAN_ARGS)
      set(T_ASAN_ARGS ${T_ARGS})
    endif()
    add_executable(${name}_asan ${T_SOURCES})
    target_compile_options(${name}_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
    target_link_options(${name}_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
    target_link_libraries(${name}_asan PRIVATE ncclbpf_engine_asan ${T_LIBS})
    target_include_directories(${name}_asan PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    add_test(NAME ${name}.asan COMMAND ${name}_asan ${T_ASAN_ARGS})
    set_tests_properties(${name}.asan PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "asan;${T_LABELS}"
      ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endif()
endfunction()
