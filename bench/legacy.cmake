# legacy_share: the pre-sharemgr per-share sharetab update, the baseline row
# of scripts/bench (issue 6). Plain POSIX; no project libraries.
add_executable(legacy_share ${CMAKE_CURRENT_SOURCE_DIR}/legacy/legacy_share.cc)
