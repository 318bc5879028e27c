# Verifier tests: the rule table (rejected programs with their messages, accepted programs run
# in the bounds-checking interpreter), unit tests of the abstract domains, soundness and kernel
# differential runs over generated programs.
ncclbpf_test(test_verifier_table
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_verifier_table.c
  LABELS verifier TIMEOUT 120)
target_include_directories(test_verifier_table PRIVATE ${CMAKE_CURRENT_LIST_DIR})
if(TARGET test_verifier_table_asan)
  target_include_directories(test_verifier_table_asan PRIVATE ${CMAKE_CURRENT_LIST_DIR})
endif()
