# Test registration. Every test of the project is registered with one of these helpers (tests/,
# benchmarks/, models/); use them for new tests, never add_test or PASS_REGULAR_EXPRESSION
# (configuring fails on a test registered otherwise or one given CTest's own pass/fail properties):
#
#   ncclbpf_add_test(NAME <name> COMMAND <command> [<arg>...]
#                    [STATUS <n>]              exit status that passes, exactly (default 0)
#                    [OUTPUT <regex>...]       stdout+stderr must match every one
#                    [NOT_OUTPUT <regex>...]   ... and none of these
#                    [SANITIZER asan|tsan]     the command is a sanitizer build (see below)
#                    [ENVIRONMENT <var=value>...] [LABELS <label>...]
#                    [TIMEOUT <s>]             what it needs when idle, default 300; the hang
#                                              guard is NCCLBPF_TEST_TIMEOUT_SCALE (3) times
#                                              that, twice that again for sanitizer builds
#                    [PROPERTIES <prop> <value>...])   other CTest properties (DEPENDS, ...)
#
#   ncclbpf_add_twin_test(<same options>)
#     NAME as given and, with NCCLBPF_SANITIZERS, NAME.asan: the same command where every
#     $<TARGET_FILE:t> (and a bare target name as the command) with a sanitizer build t_asan is
#     replaced by it (the CLI ncclbpf, the plugin nccl_ncclbpf, test drivers). CLI and plugin
#     tests use this so that their twins can never be forgotten or differ. The text <TWIN> in
#     an argument becomes "" and ".asan" (separate work directories for the two).
#
#   ncclbpf_test(<name> SOURCES <c files> [LIBS ...] [ARGS ...] [ASAN_ARGS ...] [NO_SANITIZE]
#                [STATUS n] [OUTPUT ...] [NOT_OUTPUT ...] [ENVIRONMENT ...]
#                [ASAN_ENVIRONMENT ...] [LABELS ...] [TIMEOUT s])
#     builds <name> against the engine and the NCCL platform (ncclbpf_platform: the program
#     types of include/ncclbpf.h) and registers it; with NCCLBPF_SANITIZERS also
#     <name>_asan against their ASan+UBSan builds, registered as <name>.asan (with ASAN_ARGS when
#     given, e.g. smaller counts, and ASAN_ENVIRONMENT added).
#
# What a test's result means: every test runs through ncclbpf_test_runner
# (tests/runner/test_runner.c). It passes only when the exit status is exactly STATUS ("must
# fail" tests name their exact status) and the output matches every OUTPUT and no NOT_OUTPUT;
# any sanitizer report in the output fails it. Exit status 77 is a visible skip (a missing
# prerequisite: no bpf(), no llvm-objdump, no JIT on this architecture; tests/common/skip.h),
# CTest shows "Skipped" and counts it as not run. A timeout kills the test's process group.
# Patterns are POSIX extended regular expressions over the whole output ('.' matches newlines
# too); they may not contain ';' (CMake lists): write '.' for it. Their '[' and ']' must pair up
# (an unpaired '\\[' makes CMake swallow the following keywords into the pattern; refused).
#
# Sanitizer builds report with their own exit status, so no sanitizer error can pass as the
# status a test expects: ASan and LeakSanitizer 86, UBSan 87, TSan 88 (NCCLBPF_ASAN_ENV,
# NCCLBPF_TSAN_ENV; SANITIZER asan|tsan sets them and the label). A test that needs other
# sanitizer options appends them: ENVIRONMENT "ASAN_OPTIONS=${NCCLBPF_ASAN_OPTIONS}:detect_leaks=0".
set(NCCLBPF_SAN_EXIT_ASAN 86)
set(NCCLBPF_SAN_EXIT_UBSAN 87)
set(NCCLBPF_SAN_EXIT_TSAN 88)
set(NCCLBPF_ASAN_OPTIONS "detect_leaks=1:exitcode=${NCCLBPF_SAN_EXIT_ASAN}")
set(NCCLBPF_UBSAN_OPTIONS "print_stacktrace=1:halt_on_error=1:exitcode=${NCCLBPF_SAN_EXIT_UBSAN}")
set(NCCLBPF_TSAN_OPTIONS
    "halt_on_error=1:second_deadlock_stack=1:exitcode=${NCCLBPF_SAN_EXIT_TSAN}")
set(NCCLBPF_ASAN_ENV "ASAN_OPTIONS=${NCCLBPF_ASAN_OPTIONS}"
    "UBSAN_OPTIONS=${NCCLBPF_UBSAN_OPTIONS}")
set(NCCLBPF_TSAN_ENV "TSAN_OPTIONS=${NCCLBPF_TSAN_OPTIONS}")
set(NCCLBPF_TEST_TIMEOUT_SCALE 3 CACHE STRING
    "Hang guard of every test: its TIMEOUT times this (twice that for sanitizer builds)")
set(NCCLBPF_TEST_RUNNER_SOURCE ${CMAKE_CURRENT_LIST_DIR}/../tests/runner/test_runner.c)

# The rule above enforced: configuring fails when a test is registered another way. Tests made
# by ncclbpf_add_test are recorded; at the end of each directory that registered one, its tests
# are checked for CTest properties that would override the runner's verdict, and at the end of
# the top-level directory every test of the project must be a recorded one.
set(_NCCLBPF_VERDICT_PROPERTIES
  PASS_REGULAR_EXPRESSION FAIL_REGULAR_EXPRESSION SKIP_REGULAR_EXPRESSION WILL_FAIL)

function(_ncclbpf_check_directory_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    foreach(p IN LISTS _NCCLBPF_VERDICT_PROPERTIES)
      get_test_property(${t} ${p} v)
      if(v)
        message(FATAL_ERROR "test ${t} (${CMAKE_CURRENT_SOURCE_DIR}) sets ${p}: the runner "
          "decides pass/fail (STATUS, OUTPUT, NOT_OUTPUT of ncclbpf_add_test)")
      endif()
    endforeach()
  endforeach()
endfunction()

function(_ncclbpf_tests_under dir out)
  get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _ncclbpf_tests_under(${sub} more)
    list(APPEND tests ${more})
  endforeach()
  set(${out} "${tests}" PARENT_SCOPE)
endfunction()

function(_ncclbpf_check_all_tests)
  _ncclbpf_tests_under(${CMAKE_CURRENT_SOURCE_DIR} stray)
  get_property(ours GLOBAL PROPERTY NCCLBPF_RUNNER_TESTS)
  if(stray AND ours)
    list(REMOVE_ITEM stray ${ours})
  endif()
  if(stray)
    list(JOIN stray ", " names)
    message(FATAL_ERROR "tests registered without ncclbpf_add_test (cmake/NcclbpfTargets.cmake) "
      "run without the runner's exit status and sanitizer checks: ${names}")
  endif()
endfunction()
# Deferred to the end of the directory that includes this file (the top level).
cmake_language(DEFER CALL _ncclbpf_check_all_tests)

# ncclbpf_add_test's keywords (also parsed by the helpers that forward them).
set(_NCCLBPF_TEST_ONE "NAME;STATUS;SANITIZER;TIMEOUT")
set(_NCCLBPF_TEST_MULTI "COMMAND;OUTPUT;NOT_OUTPUT;ENVIRONMENT;LABELS;PROPERTIES")

function(ncclbpf_add_test)
  cmake_parse_arguments(T "" "${_NCCLBPF_TEST_ONE}" "${_NCCLBPF_TEST_MULTI}" ${ARGN})
  if(NOT T_NAME OR NOT T_COMMAND OR T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "ncclbpf_add_test: NAME and COMMAND required (${T_NAME}: ${T_UNPARSED_ARGUMENTS})")
  endif()
  if(NOT TARGET ncclbpf_test_runner)
    add_executable(ncclbpf_test_runner ${NCCLBPF_TEST_RUNNER_SOURCE})
  endif()
  if(NOT DEFINED T_STATUS)
    set(T_STATUS 0)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # TIMEOUT is what the test needs on an idle machine; the hang guard allows a loaded one (two
  # cores shared with a parallel suite or a stress run) and a sanitizer build's slowdown.
  if(T_SANITIZER)
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * ${NCCLBPF_TEST_TIMEOUT_SCALE} * 2")
  else()
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * ${NCCLBPF_TEST_TIMEOUT_SCALE}")
  endif()
  set(env)
  set(labels ${T_LABELS})
  if(T_SANITIZER STREQUAL "asan")
    set(env ${NCCLBPF_ASAN_ENV})
    list(PREPEND labels asan)
  elseif(T_SANITIZER STREQUAL "tsan")
    set(env ${NCCLBPF_TSAN_ENV})
    list(PREPEND labels tsan)
  elseif(T_SANITIZER)
    message(FATAL_ERROR "ncclbpf_add_test(${T_NAME}): SANITIZER is asan or tsan")
  endif()
  list(APPEND env ${T_ENVIRONMENT}) # later entries win: a test may override the options
  set(checks --status ${T_STATUS} --timeout ${T_TIMEOUT})
  foreach(kind OUTPUT NOT_OUTPUT)
    foreach(re ${T_${kind}})
      if(re MATCHES ";")
        message(FATAL_ERROR "ncclbpf_add_test(${T_NAME}): ${kind} pattern with ';' or an "
          "unpaired '[': ${re}")
      endif()
      string(TOLOWER "--${kind}" opt)
      string(REPLACE "_" "-" opt "${opt}")
      list(APPEND checks ${opt} "${re}")
    endforeach()
  endforeach()
  # A bare target name as the command (add_test's convenience) becomes its file.
  list(GET T_COMMAND 0 cmd0)
  if(TARGET ${cmd0})
    list(REMOVE_AT T_COMMAND 0)
    list(PREPEND T_COMMAND $<TARGET_FILE:${cmd0}>)
  endif()
  add_test(NAME ${T_NAME} COMMAND ncclbpf_test_runner ${checks} -- ${T_COMMAND})
  set_property(GLOBAL APPEND PROPERTY NCCLBPF_RUNNER_TESTS ${T_NAME})
  get_property(checked DIRECTORY PROPERTY _NCCLBPF_TESTS_CHECKED SET)
  if(NOT checked)
    set_property(DIRECTORY PROPERTY _NCCLBPF_TESTS_CHECKED TRUE)
    cmake_language(DEFER CALL _ncclbpf_check_directory_tests)
  endif()
  # CTest's own limit only backs up the runner's (which kills the process group and says so).
  math(EXPR ctest_timeout "${T_TIMEOUT} + 60")
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${ctest_timeout} SKIP_RETURN_CODE 77
    LABELS "${labels}")
  if(env)
    set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${env}")
  endif()
  if(T_PROPERTIES)
    set_tests_properties(${T_NAME} PROPERTIES ${T_PROPERTIES})
  endif()
endfunction()

# The command of a sanitizer twin: every target reference with a t_asan build points at it.
# Sets out to the new list and changed to TRUE when a reference has a sanitizer build already
# (the CLI and the plugin, defined before any test fragment).
function(_ncclbpf_asan_command out changed)
  set(res)
  set(any FALSE)
  set(first TRUE)
  foreach(a IN LISTS ARGN)
    if(first AND TARGET ${a} AND TARGET ${a}_asan)
      set(a ${a}_asan)
      set(any TRUE)
    endif()
    set(first FALSE)
    string(REGEX MATCHALL "\\$<TARGET_FILE:[A-Za-z0-9_.+-]+>" refs "${a}")
    foreach(r IN LISTS refs)
      string(REGEX REPLACE "^\\$<TARGET_FILE:(.*)>$" "\\1" t "${r}")
      if(TARGET ${t}_asan)
        set(any TRUE)
      endif()
      # Resolved when the build is generated: t_asan may be defined by a later fragment.
      string(REPLACE "${r}"
        "$<TARGET_FILE:$<IF:$<TARGET_EXISTS:${t}_asan>,${t}_asan,${t}>>" a "${a}")
    endforeach()
    list(APPEND res "${a}")
  endforeach()
  set(${out} "${res}" PARENT_SCOPE)
  set(${changed} ${any} PARENT_SCOPE)
endfunction()

function(ncclbpf_add_twin_test)
  cmake_parse_arguments(T "" "${_NCCLBPF_TEST_ONE}" "${_NCCLBPF_TEST_MULTI}" ${ARGN})
  set(opts)
  foreach(k STATUS TIMEOUT OUTPUT NOT_OUTPUT ENVIRONMENT LABELS PROPERTIES)
    if(DEFINED T_${k})
      list(APPEND opts ${k} ${T_${k}})
    endif()
  endforeach()
  string(REPLACE "<TWIN>" "" plain_cmd "${T_COMMAND}")
  ncclbpf_add_test(NAME ${T_NAME} COMMAND ${plain_cmd} ${opts})
  if(NCCLBPF_SANITIZERS)
    string(REPLACE "<TWIN>" ".asan" twin_cmd "${T_COMMAND}")
    _ncclbpf_asan_command(asan_cmd changed ${twin_cmd})
    if(changed)
      ncclbpf_add_test(NAME ${T_NAME}.asan COMMAND ${asan_cmd} SANITIZER asan ${opts})
    endif()
  endif()
endfunction()

function(ncclbpf_test name)
  cmake_parse_arguments(T "NO_SANITIZE" "TIMEOUT;STATUS"
    "SOURCES;LIBS;ARGS;ASAN_ARGS;LABELS;OUTPUT;NOT_OUTPUT;ENVIRONMENT;ASAN_ENVIRONMENT" ${ARGN})
  set(checks)
  foreach(opt TIMEOUT STATUS)
    if(DEFINED T_${opt})
      list(APPEND checks ${opt} ${T_${opt}})
    endif()
  endforeach()
  foreach(opt LABELS OUTPUT NOT_OUTPUT)
    if(T_${opt})
      list(APPEND checks ${opt} ${T_${opt}})
    endif()
  endforeach()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ncclbpf_platform ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  ncclbpf_add_test(NAME ${name} COMMAND $<TARGET_FILE:${name}> ${T_ARGS} ${checks}
    ENVIRONMENT ${T_ENVIRONMENT})
  if(NCCLBPF_SANITIZERS AND NOT T_NO_SANITIZE)
    if(NOT T_ASAN_ARGS)
      set(T_ASAN_ARGS ${T_ARGS})
    endif()
    add_executable(${name}_asan ${T_SOURCES})
    target_compile_options(${name}_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
    target_link_options(${name}_asan PRIVATE ${NCCLBPF_SANITIZE_FLAGS})
    target_link_libraries(${name}_asan PRIVATE ncclbpf_platform_asan ${T_LIBS})
    target_include_directories(${name}_asan PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    ncclbpf_add_test(NAME ${name}.asan COMMAND $<TARGET_FILE:${name}_asan> ${T_ASAN_ARGS}
      SANITIZER asan ${checks} ENVIRONMENT ${T_ENVIRONMENT} ${T_ASAN_ENVIRONMENT})
  endif()
endfunction()

# ncclbpf_bpf_objects(OUT_VAR OUT_DIR SRC_DIR NAME...): a rule compiling each SRC_DIR/NAME.c with
# clang into OUT_DIR/NAME.o (NCCLBPF_BPF_TEST_CFLAGS); OUT_VAR gets the objects' paths, for the
# custom target the caller makes of them in the same directory.
function(ncclbpf_bpf_objects out_var out_dir src_dir)
  set(objs)
  file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${src_dir})
  foreach(n ${ARGN})
    set(out ${out_dir}/${n}.o)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND ${NCCLBPF_CLANG} ${NCCLBPF_BPF_TEST_CFLAGS} -c ${src_dir}/${n}.c -o ${out}
      DEPENDS ${src_dir}/${n}.c ${PROJECT_SOURCE_DIR}/include/ncclbpf.h
      COMMENT "BPF ${rel_dir}/${n}.c")
    list(APPEND objs ${out})
  endforeach()
  set(${out_var} ${objs} PARENT_SCOPE)
endfunction()
