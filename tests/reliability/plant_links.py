#!/usr/bin/env python3
"""Plants symbolic links the way a local attacker would, for the file-safety
tests. Run it as the attacker (setpriv --reuid=nobody ...).

  plant_links.py race NAME TARGET SECONDS
      Until SECONDS pass or the file NAME.stop exists, watches NAME and,
      each time a socket appears there, replaces it at once with a symbolic
      link to TARGET (a link made beforehand under a private name, renamed
      over NAME: one system call after the socket is seen). Prints how
      many sockets it replaced.
"""
import os
import stat
import sys
import time


def race(name, target, seconds):
    folder = os.path.dirname(name) or "."
    tmp = os.path.join(folder, ".plant.%d" % os.getpid())
    stop = name + ".stop"
    deadline = time.monotonic() + seconds
    replaced = 0
    ready = False
    spins = 0
    while True:
        spins += 1
        if spins % 4096 == 0 and (time.monotonic() >= deadline or
                                  os.path.exists(stop)):
            break
        if not ready:
            try:
                os.symlink(target, tmp)
            except FileExistsError:
                pass
            ready = True
        try:
            if not stat.S_ISSOCK(os.lstat(name).st_mode):
                continue
            os.rename(tmp, name)
            replaced += 1
            ready = False
        except OSError:
            pass
    try:
        os.unlink(tmp)
    except OSError:
        pass
    print(replaced)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "race":
        race(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
