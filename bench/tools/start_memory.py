#!/usr/bin/env python3
"""sharemgrd start-up, memory and SIGTERM at N shares, alternated with a peer.

For each size: N folders in --pool, one store made by one `sharectl batch`
(16 creates + N add-shares) against `--bin`'s daemon, stopped once fs_watch
has recorded every share's file system (as a daemon that ran a while
leaves it). Then, per round, alternating which goes first, `--bin` and
`--peer-bin` each start on a fresh copy of that store:
  serving_s    spawn until the "serving" line
  load_ms      the loader's own figure from that line
  rss_serving  VmRSS at the serving line (MiB)
  rss_settled  VmRSS --settle seconds after fs_watch's first round (MiB)
  hwm          VmHWM then (MiB)
  term_s       SIGTERM until the process exited
and, with --term-at-serving, also a SIGTERM right at the serving line (the
first round and the view are then still running). One JSON line per run
on stdout, medians at the end. With --make-with-peer the store is made by
the peer, and each build starts once on a copy of it before the timed runs
and keeps that copy as its own: a build that writes a newer schema then
starts its timed runs on a store it has already upgraded.

  bench/tools/start_memory.py --bin build/bin --peer-bin /tmp/old \\
      --sizes 15000,100000,1000000 --rounds 3 --term-at-serving
"""
import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import queue

GROUPS = 16


def log(msg):
  print(msg, file=sys.stderr, flush=True)


def rss_mib(pid, key="VmRSS:"):
  try:
    with open(f"/proc/{pid}/status") as f:
      for line in f:
        if line.startswith(key):
          return int(line.split()[1]) // 1024
  except FileNotFoundError:
    return None
  return None


class Daemon:
  def __init__(self, bindir, folder):
    self.bindir = bindir
    self.folder = folder
    self.db = os.path.join(folder, "shares.db")
    self.socket = os.path.join(folder, "sock")
    self.q = queue.Queue()
    self.lines = []

  def start(self):
    cmd = [os.path.join(self.bindir, "sharemgrd"), "--foreground", "--db",
           self.db, "--socket", self.socket, "--sharetab",
           os.path.join(self.folder, "sharetab"), "--mount-port", "0",
           "--no-rpcbind", "--kernel=off"]
    self.t0 = time.perf_counter()
    self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
    threading.Thread(target=self._read, daemon=True).start()

  def _read(self):
    for line in self.proc.stderr:
      self.lines.append(line.rstrip("\n"))
      self.q.put(line)
    self.q.put(None)

  def wait_for(self, pattern, timeout):
    """The first line matching `pattern`, also one read before (fs_watch's
    first round over a small table may end before the serving line)."""
    for line in list(self.lines):
      m = re.search(pattern, line)
      if m:
        return m
    end = time.perf_counter() + timeout
    while True:
      try:
        line = self.q.get(timeout=max(0.01, end - time.perf_counter()))
      except queue.Empty:
        line = None
      if line is None:
        raise RuntimeError(f"no {pattern!r}: " + " | ".join(self.lines[-5:]))
      m = re.search(pattern, line)
      if m:
        return m

  def stop(self):
    t = time.perf_counter()
    self.proc.send_signal(signal.SIGTERM)
    try:
      self.proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
      self.proc.kill()
      self.proc.wait()
    return time.perf_counter() - t


def make_store(bindir, pool, n, out_db, work):
  root = os.path.join(pool, f"n{n}")
  groups = [f"g{g:02d}" for g in range(GROUPS)]
  per = -(-n // GROUPS)
  batch = os.path.join(work, f"add-{n}.txt")
  with open(batch, "w") as f:
    for g in groups:
      f.write(f"create {g}\n")
    for i in range(n):
      p = os.path.join(root, f"u{i:07d}")
      os.makedirs(p, exist_ok=True)
      f.write(f"add-share -s {p} {groups[i // per]}\n")
  folder = tempfile.mkdtemp(dir=work, prefix=f"make-{n}-")
  d = Daemon(bindir, folder)
  d.start()
  d.wait_for(r"serving \d+ shares", 60)
  subprocess.run([os.path.join(bindir, "sharectl"), "--socket", d.socket,
                  "batch", batch], check=True, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL, timeout=3600)
  # fs_watch records each share's file system after the batch.
  for _ in range(1800):
    con = sqlite3.connect(f"file:{d.db}?mode=ro", uri=True, timeout=30)
    done = con.execute("SELECT COUNT(fs_mount) FROM shares").fetchone()[0]
    con.close()
    if done == n:
      break
    time.sleep(1)
  d.stop()
  shutil.copy(d.db, out_db)
  shutil.rmtree(folder, ignore_errors=True)


def one_run(bindir, golden, work, settle, term_at_serving):
  folder = tempfile.mkdtemp(dir=work, prefix="run-")
  shutil.copy(golden, os.path.join(folder, "shares.db"))
  d = Daemon(bindir, folder)
  d.start()
  m = d.wait_for(r"serving (\d+) shares? .*loaded in ([\d.]+) ms", 600)
  r = {"serving_s": time.perf_counter() - d.t0, "shares": int(m.group(1)),
       "load_ms": float(m.group(2)), "rss_serving": rss_mib(d.proc.pid)}
  if not term_at_serving:
    d.wait_for(r"file systems probed", 600)
    time.sleep(settle)
    r["rss_settled"] = rss_mib(d.proc.pid)
  r["hwm"] = rss_mib(d.proc.pid, "VmHWM:")
  r["term_s"] = d.stop()
  r["rc"] = d.proc.returncode
  shutil.rmtree(folder, ignore_errors=True)
  return r


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--bin", required=True, help="folder with sharemgrd, sharectl")
  ap.add_argument("--peer-bin", help="folder with the sharemgrd to compare")
  ap.add_argument("--sizes", default="15000,100000")
  ap.add_argument("--rounds", type=int, default=3)
  ap.add_argument("--settle", type=float, default=3.0)
  ap.add_argument("--term-at-serving", action="store_true")
  ap.add_argument("--make-with-peer", action="store_true",
                  help="the peer makes the store; each build upgrades a "
                  "copy once before the timed runs")
  ap.add_argument("--pool", default="/dev/shm/sharemgr-start-memory")
  ap.add_argument("--work", default=None, help="stores and copies (default: a "
                  "temporary folder under /tmp)")
  a = ap.parse_args()
  work = a.work or tempfile.mkdtemp(prefix="start-memory-")
  os.makedirs(work, exist_ok=True)
  bins = [("bin", a.bin)] + ([("peer", a.peer_bin)] if a.peer_bin else [])
  log(f"uptime: {os.getloadavg()}")
  results = {}
  for n in [int(s) for s in a.sizes.split(",")]:
    golden = os.path.join(work, f"golden-{n}.db")
    if not os.path.exists(golden):
      log(f"{n}: making the store")
      make_store(a.peer_bin if a.make_with_peer and a.peer_bin else a.bin,
                 a.pool, n, golden, work)
    own = {name: golden for name, _ in bins}
    if a.make_with_peer:
      for name, bindir in bins:
        own[name] = os.path.join(work, f"golden-{n}-{name}.db")
        if os.path.exists(own[name]):
          continue
        folder = tempfile.mkdtemp(dir=work, prefix="upgrade-")
        shutil.copy(golden, os.path.join(folder, "shares.db"))
        d = Daemon(bindir, folder)
        t = time.perf_counter()
        d.start()
        d.wait_for(r"serving \d+ shares", 600)
        log(f"{n}: {name} upgraded and loaded its copy in "
            f"{time.perf_counter() - t:.2f} s")
        d.stop()
        shutil.copy(os.path.join(folder, "shares.db"), own[name])
        shutil.rmtree(folder, ignore_errors=True)
    kinds = ["settled"] + (["at-serving"] if a.term_at_serving else [])
    for kind in kinds:
      for rnd in range(a.rounds):
        order = bins if rnd % 2 == 0 else bins[::-1]
        for name, bindir in order:
          r = one_run(bindir, own[name], work, a.settle, kind == "at-serving")
          r.update({"size": n, "bin": name, "kind": kind, "round": rnd + 1})
          print(json.dumps(r), flush=True)
          results.setdefault((n, name, kind), []).append(r)
  log(f"uptime: {os.getloadavg()}")
  for (n, name, kind), rs in sorted(results.items()):
    med = {k: statistics.median(r[k] for r in rs) for k in rs[0]
           if isinstance(rs[0][k], (int, float))
           and k not in ("round", "shares", "rc", "size")}
    log(f"{n:>8} {name:4} {kind:10} " +
        " ".join(f"{k} {v:.3g}" for k, v in med.items()))
  if not a.work:
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
  main()
