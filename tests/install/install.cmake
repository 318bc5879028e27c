# `cmake --install` into a scratch prefix, copied elsewhere: the layout, no source or build path
# in any installed file, and demo, bench and test-run run from the copy (install.sh).
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME install_relocatable
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/install.sh ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR}
    OUTPUT "install: all checks passed" LABELS cli install TIMEOUT 120)
endif()

# docs/quickstart.md's CPU part, its command blocks run as written in a copy of the tree
# (quickstart_cpu.sh): build, install into a scratch HOME, verify, test-run, replay, run.
if(NCCLBPF_BUILD_POLICIES)
  ncclbpf_add_test(NAME quickstart_cpu
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/quickstart_cpu.sh ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/quickstart
    OUTPUT "quickstart_cpu: all checks passed" LABELS "install;quickstart" TIMEOUT 900)
endif()
