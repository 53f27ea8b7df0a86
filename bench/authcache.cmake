# authcache_bench: AuthCache::Check on a hit (1 and 2 threads, p99 from
# per-call timings), a miss with an instant resolver, a storm of 20,000
# distinct clients, and hits while one lookup stalls (issue 3).
# Results: bench/README.md, "Google Benchmark programs"; history:
# bench/JOURNAL.md, section "authcache (issue 3)".
add_executable(authcache_bench ${CMAKE_CURRENT_LIST_DIR}/authcache_bench.cc)
target_link_libraries(authcache_bench PRIVATE authcache benchmark::benchmark)
