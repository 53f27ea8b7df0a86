"""A kernel NFS client program that holds a file open across a failover.

    held_file_client.py DIR   (commands on stdin, one answer line each)

Opens DIR/file with O_DIRECT (every read goes to the server with the
handle the open got), prints "opened", then answers each command read on
standard input with "ok TEXT" or "err ERROR" (strerror):
  read-open    the open file's first 4 KiB
  list         the names in DIR
  write NAME   writes "NAME" and a newline to DIR/NAME
  quit         ends
Used by tests/support/kernel/lib.sh's kt_held_client_* helpers.
"""
import mmap
import os
import sys

d = sys.argv[1]
fd = os.open(os.path.join(d, "file"), os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
print("opened", flush=True)
for cmd in sys.stdin:
    cmd = cmd.strip()
    if cmd == "quit":
        break
    try:
        if cmd == "read-open":
            n = os.preadv(fd, [buf], 0)
            print("ok", bytes(buf[:n]).decode().strip(), flush=True)
        elif cmd == "list":
            print("ok", " ".join(sorted(os.listdir(d))), flush=True)
        elif cmd.startswith("write "):
            with open(os.path.join(d, cmd[6:]), "w") as f:
                f.write(cmd[6:] + "\n")
            print("ok written", flush=True)
    except OSError as e:
        print("err", e.strerror, flush=True)
