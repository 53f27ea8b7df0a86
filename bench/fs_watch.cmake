# fs_watch_bench: the served-state probe of sharemgrd (shares follow their
# file systems) at 15,000 shares: parsing a 15,000-mount mountinfo, one
# probe round, and the per-decision live check, each beside the bare
# syscalls it cannot avoid (read of the file, lstat of every share path).
# Results: bench/README.md, "Google Benchmark programs"; history:
# bench/JOURNAL.md, "fs_watch: shares follow their file systems".
add_executable(fs_watch_bench ${CMAKE_CURRENT_LIST_DIR}/fs_watch_bench.cc)
target_link_libraries(fs_watch_bench PRIVATE sharemgrd_access benchmark::benchmark)
