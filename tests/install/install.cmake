# `cmake --install` into a scratch prefix, copied elsewhere: the layout, no source or build path
# in any installed file, and demo, bench and test-run run from the copy (install.sh).
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME install_relocatable
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install.sh ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR}
    OUTPUT "install: all checks passed" LABELS cli install TIMEOUT 120)
endif()
