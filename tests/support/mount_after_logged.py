#!/usr/bin/env python3
"""Makes mount changes the moment the daemon logs a change applied.

  mount_after_logged.py LOG TEXT STEP...

Prints "ready" once it watches LOG, then polls it (every millisecond) until
it holds one more line containing TEXT than when it started, then makes the
STEPs with system calls, one after another, and prints "done". A STEP is
one word and its arguments:

  bind SRC DST       mount --bind SRC DST
  umount PATH        umount PATH
  tmpfs SOURCE PATH  mount -t tmpfs -o size=1m SOURCE PATH
  mkdir PATH         mkdir PATH

For the tests of a change followed by a mount change before the round the
change wakes (50 ms after it; a mount change wakes one 20 ms after it):
a shell starting `umount` and `mount` processes after `sharectl` exits was
too slow for that on a loaded machine, a sanitizer build's `sharectl`
alone spending 40 ms in its leak check at exit. Exits 1 with the reason on
standard error when a step fails, 2 when TEXT is not logged within 20 s.
"""
import ctypes
import os
import sys
import time

MS_BIND = 4096
ARITY = {"bind": 2, "umount": 1, "tmpfs": 2, "mkdir": 1}


def count(log, text):
    try:
        with open(log, errors="replace") as f:
            return sum(text in line for line in f)
    except FileNotFoundError:
        return 0


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: mount_after_logged.py LOG TEXT STEP...")
    log, text, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    steps = []
    while args:
        word = args[0]
        if word not in ARITY or len(args) < 1 + ARITY[word]:
            sys.exit(f"mount_after_logged.py: bad step at {' '.join(args)}")
        steps.append((word, args[1:1 + ARITY[word]]))
        args = args[1 + ARITY[word]:]
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc, what):
        if rc != 0:
            print(f"mount_after_logged.py: {what}: "
                  f"{os.strerror(ctypes.get_errno())}", file=sys.stderr)
            sys.exit(1)

    before = count(log, text)
    print("ready", flush=True)
    deadline = time.monotonic() + 20
    while count(log, text) <= before:
        if time.monotonic() > deadline:
            print(f"mount_after_logged.py: '{text}' not logged in 20 s",
                  file=sys.stderr)
            sys.exit(2)
        time.sleep(0.001)
    for word, a in steps:
        what = " ".join([word] + a)
        if word == "bind":
            check(libc.mount(a[0].encode(), a[1].encode(), None, MS_BIND,
                             None), what)
        elif word == "umount":
            check(libc.umount2(a[0].encode(), 0), what)
        elif word == "tmpfs":
            check(libc.mount(a[0].encode(), a[1].encode(), b"tmpfs", 0,
                             b"size=1m"), what)
        else:
            os.mkdir(a[0])
    print("done", flush=True)


main()
