"""A reader looping on one open file, for a failover's stall.

    stall_reader.py FILE [INTERVAL]

Opens FILE with O_DIRECT (each read goes to the server with the handle
and, over NFSv4, the open state the open got), then reads its first
4 KiB every INTERVAL seconds (default 0.05) until SIGTERM. Prints, each
line flushed, times as the guest's wall clock (time.time()):
  ok T              the first successful read
  gap LAST NEXT     a success NEXT more than 0.3 s after the previous
                    one LAST (a stall, the failover's among them)
  err NAME T        a read failed with errno NAME (printed when the
                    error changes, not at every failed read)
  end LAST          on SIGTERM: the last successful read
"""
import errno
import mmap
import os
import signal
import sys
import time

path = sys.argv[1]
interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
last_ok = None
last_err = None


def stop(*_):
    print("end", last_ok, flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
while True:
    try:
        os.preadv(fd, [buf], 0)
        t = time.time()
        if last_ok is None:
            print("ok", t, flush=True)
        elif t - last_ok > 0.3:
            print("gap", last_ok, t, flush=True)
        last_ok = t
        last_err = None
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        if name != last_err:
            print("err", name, time.time(), flush=True)
            last_err = name
    time.sleep(interval)
