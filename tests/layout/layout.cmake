# The layout of the tree: runtime/src's folders include each other without a circle.
ncclbpf_add_test(NAME runtime_include_graph
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/include_graph.sh ${PROJECT_SOURCE_DIR}/runtime/src
  OUTPUT "\nOK\n?$" LABELS layout TIMEOUT 60)

# The C sources are clang-formatted (skipped where clang-format 14 is missing, required in CI).
ncclbpf_add_test(NAME clang_format
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/format.sh ${PROJECT_SOURCE_DIR}
  OUTPUT "^OK\n?$" LABELS layout TIMEOUT 120)
