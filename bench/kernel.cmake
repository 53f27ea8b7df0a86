# kernel_bench: the kernel mode's answer times inside the daemon, over
# 15,000 shares (DESIGN.md target: an upcall answered, cached decision,
# p99 <= 200 us): nfsd.export for a share, nfsd.export for the pseudo-root
# above all of them, nfsd.fh by index; and the start-up fsid index build;
# the upcall queue (KeyedWorkQueue) alone, jobs per second.
add_executable(kernel_bench ${CMAKE_CURRENT_LIST_DIR}/kernel_bench.cc)
target_link_libraries(kernel_bench PRIVATE sharemgrd_kernel benchmark::benchmark)
