#!/usr/bin/env bash
# The kernel scenarios' guest is tests/support/kernel/guest.sh, shared with
# the kernel benchmarks (bench/kernel_guest); this name stays for the
# commands in tests/kernel/README.md.
exec "$(dirname "$0")/../support/kernel/guest.sh" "$@"
