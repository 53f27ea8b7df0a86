# libshare_bench: share-table changes old (per-share sharetab rewrite) and
# new (Catalog batches committed to SQLite), and group-parallel loading
# (issue 2). Results: bench/README.md, "Google Benchmark programs";
# history: bench/JOURNAL.md, section "libshare (issue 2)".
add_executable(libshare_bench ${CMAKE_CURRENT_LIST_DIR}/libshare_bench.cc)
target_link_libraries(libshare_bench PRIVATE share share_internal
  benchmark::benchmark)
