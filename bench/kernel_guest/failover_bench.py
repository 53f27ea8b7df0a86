#!/usr/bin/env python3
"""Two kernel NFS heads (issue 47): sharemgrd --kernel=on --store on both
against rpc.mountd + exportfs on both, in one QEMU guest
(tests/support/kernel/guest.sh): a change on head B until head A serves it, a
client's stall across a failover, mounted shares stat'ed on A after a
change. Prints the table and writes OUT/kernel_table_failover.md (.csv,
kernel_raw_failover.json) and the guest's files (OUT/kernel_guest_failover/).

  bench/kernel_guest/failover_bench.py                    # 15,000 ops
  bench/kernel_guest/failover_bench.py --ops 2000 --rounds 1 --no-replica
  bench/kernel_guest/failover_bench.py --first sharemgr   # the other order

The guest side is bench/kernel_guest/failover_bench.sh (its header says
what each row times). Needs root, QEMU, the prepared guest (scripts/deps)
and PostgreSQL's server binaries.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PEERS = ("mountd", "sharemgr")
PEER_NAMES = {"mountd": "rpc.mountd + exportfs, both heads",
              "sharemgr": "sharemgrd --kernel=on --store, both heads"}


def log(msg):
  print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg():
  with open("/proc/loadavg") as f:
    return " ".join(f.read().split()[:3])


def fmt(s):
  if s < 0.001:
    return f"{s * 1e6:.0f} µs"
  if s < 1:
    return f"{s * 1000:.3g} ms"
  return f"{s:.3g} s"


def cell(vals):
  """Median [min–max] of the numbers; words (an errno name) as they are."""
  if not vals:
    return "—", None
  words = sorted({v for v in vals if isinstance(v, str)})
  nums = [v for v in vals if not isinstance(v, str)]
  if words:
    return ", ".join(words) + (f" ({len(words)} of {len(vals)})"
                               if nums else ""), None
  m = statistics.median(nums)
  text = fmt(m)
  if len(nums) > 1:
    text += f" [{fmt(min(nums))}–{fmt(max(nums))}]"
  return text, m


def build_table(res, host):
  by = {}
  with open(os.path.join(res, "results.tsv")) as f:
    for line in f:
      ses, peer, what, rnd, val = line.split()
      try:
        v = float(val)
      except ValueError:
        v = val
      by.setdefault((peer, what), []).append(v)
  facts = {}
  with open(os.path.join(res, "facts")) as f:
    for line in f:
      k, _, v = line.rstrip("\n").partition(" ")
      facts[k] = v
  n = f"{int(facts['ops']):,}"
  rows = []

  def row(what, key):
    a, am = cell(by.get(("mountd", key), []))
    b, bm = cell(by.get(("sharemgr", key), []))
    ratio = f"{am / bm:.1f}×" if am and bm else "—"
    rows.append((what, a, b, ratio))

  def flushed(key):
    out = []
    for p in PEERS:
      xs = by.get((p, key), [])
      out.append(f"{int(sum(xs))} of {len(xs)}" if xs else "—")
    rows.append(("… A's nfsd.export cache flushed by the change", *out, "—"))

  row("1 share added on B until A's nfsd lets a client mount it (NFSv4.2)",
      "serve1")
  row("… of it the command on B (mountd: edit + `exportfs -ra` on B, then "
      "on A)", "serve1_cmd")
  row("… until A has it (mountd: the same; sharemgr: A at B's generation)",
      "serve1_follow")
  row(f"{n} shares added on B until A mounts the last", "serveN")
  row("… of it the command on B (mountd: both heads)", "serveN_cmd")
  row("… until A has it", "serveN_follow")
  row("20 shares mounted through A (v4.2, actimeo=0) stat'ed right after one "
      "add on B reached A, beside 22 shares", "again_small")
  row("… the same 20 stats before the change (floor)", "again_small_floor")
  flushed("again_small_flushed")
  row(f"1 share added on B beside {n} until A has it (no mount)",
      "again_big_change_follow")
  row(f"the 20 stats beside {n} more shares", "again_big")
  row("… floor", "again_big_floor")
  flushed("again_big_flushed")
  for s, what in (("shared", "shared storage"),
                  ("replica", "a replica (B: block copy, another uuid)")):
    if not any((p, f"fo_{s}_v3") in by for p in PEERS):
      continue
    for v, vers in (("v3", "NFSv3"), ("v4", "NFSv4.2")):
      row(f"failover onto {what}, {vers}: stall of a reader looping on an "
          "open file (last read before, first after)", f"fo_{s}_{v}")
      row("… from A's kill to the first read", f"fo_{s}_{v}_kill")
      if any((p, f"fo_{s}_{v}_lookup") in by for p in PEERS):
        row("… a new look-up of the file (stat) through the same mount after "
            "the error", f"fo_{s}_{v}_lookup")
    row("… A's kill until B's `sharemgr-takeover start` returned",
        f"fo_{s}_takeover")

  md = ["| what | " + " | ".join(PEER_NAMES[p] for p in PEERS) +
        " | ratio (mountd / sharemgr) |", "|---|---:|---:|---:|"]
  md += ["| " + " | ".join(r) + " |" for r in rows]
  sessions = facts.get("sessions")
  md.append("")
  md.append(
      f"Cells: median [min–max] over {sessions} session(s) per peer "
      f"({facts.get('first')}'s first"
      + (", alternated" if sessions != "1" else "") +
      f"), {facts.get('rounds')} rounds of the 1-share rows, "
      f"{facts.get('big_rounds')} of the row beside {n}; failovers once per "
      f"session, grace period {facts.get('grace')} s. Guest: QEMU TCG, 1 "
      f"vCPU, kernel {facts.get('guest_kernel')}, nfs-utils "
      f"{host['nfs_utils']}. Host: {host['cpu']}, load average "
      f"{host['load_start']} at the start, {host['load_end']} at the end; "
      f"{host['date']}, commit {host['commit']}, guest wall time "
      f"{host['wall']:.0f} s. Ratios are the claims: TCG makes absolute "
      "times 10-50x a native run's.")
  csv = "what,mountd,sharemgr,ratio\n" + "".join(
      ",".join('"' + c.replace('"', "'") + '"' for c in r) + "\n"
      for r in rows)
  return "\n".join(md), csv, {"by": {f"{a} {b}": x for (a, b), x in
                                     by.items()},
                              "facts": facts, "host": host}


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--ops", type=int, default=15000,
                  help="shares in the big change (default 15000)")
  ap.add_argument("--rounds", type=int, default=3,
                  help="rounds of the 1-share rows per session (default 3)")
  ap.add_argument("--big-rounds", type=int, default=1,
                  help="rounds of the stats beside --ops shares (default 1)")
  ap.add_argument("--sessions", type=int, default=1,
                  help="sessions per peer, alternated (default 1)")
  ap.add_argument("--first", choices=PEERS, default="mountd",
                  help="the peer of the first session (default mountd)")
  ap.add_argument("--no-replica", action="store_true",
                  help="skip the failover onto a replica")
  ap.add_argument("--grace", type=int, default=20,
                  help="nfsd's grace period at a takeover (default 20)")
  ap.add_argument("--parts", nargs="+", choices=("serve", "failover"),
                  default=["serve", "failover"],
                  help="what to run (default both: serve = the change and "
                  "stat rows, failover = the failover rows)")
  ap.add_argument("--trace", action="store_true",
                  help="the guest plan runs under set -x (its log)")
  ap.add_argument("--build", default=os.path.join(ROOT, "build"))
  ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
  ap.add_argument("--timeout", type=int, default=3600,
                  help="seconds the guest plan may take (default 3600)")
  args = ap.parse_args()

  if not shutil.which("qemu-system-x86_64"):
    log("error: qemu-system-x86_64 not found (scripts/deps installs it)")
    return 1
  guest = os.path.join(ROOT, "tests", "support", "kernel", "guest.sh")
  script = os.path.join(ROOT, "bench", "kernel_guest", "failover_bench.sh")
  binp = os.path.abspath(os.path.join(args.build, "bin"))
  os.makedirs(args.out, exist_ok=True)
  work = tempfile.mkdtemp(prefix="sharemgr-fbench-")
  res = os.path.join(args.out, "kernel_guest_failover")
  shutil.rmtree(res, ignore_errors=True)
  wrapper = os.path.join(work, "failover_bench.sh")
  with open(wrapper, "w") as f:
    f.write("#!/usr/bin/env bash\n"
            f"export FB_OPS={args.ops} FB_ROUNDS={args.rounds} "
            f"FB_BIG_ROUNDS={args.big_rounds} FB_SESSIONS={args.sessions} "
            f"FB_FIRST={args.first} FB_REPLICA={0 if args.no_replica else 1} "
            f"FB_GRACE={args.grace}"
            + (" FB_TRACE=1" if args.trace else "") +
            f" FB_PARTS='{' '.join(args.parts)}'\n"
            f"exec bash '{script}'\n")
  env = dict(os.environ, SHAREMGR_GUEST_RESULTS=res,
             SHAREMGRD=os.path.join(binp, "sharemgrd"),
             SHARECTL=os.path.join(binp, "sharectl"),
             KT_SCENARIO_TIMEOUT=str(args.timeout))
  with open("/proc/cpuinfo") as f:
    cpus = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
  host = {"cpu": f"{len(cpus)} x {cpus[0] if cpus else '?'}",
          "load_start": loadavg(),
          "nfs_utils": subprocess.run(
              ["dpkg-query", "-W", "-f", "${Version}", "nfs-kernel-server"],
              stdout=subprocess.PIPE, text=True).stdout.strip() or "?",
          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "commit": subprocess.run(
              ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
              stdout=subprocess.PIPE, text=True).stdout.strip()}
  log(f"booting the guest: {args.ops:,} ops, {args.sessions} session(s) per "
      f"peer, {args.first} first; load {host['load_start']}")
  t0 = time.time()
  p = subprocess.run([guest, "run", wrapper], env=env, stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT, text=True)
  host["wall"] = time.time() - t0
  host["load_end"] = loadavg()
  shutil.rmtree(work, ignore_errors=True)
  sys.stderr.write(p.stdout)
  fres = os.path.join(res, "fbench")
  if p.returncode != 0 or not os.path.exists(
      os.path.join(fres, "results.tsv")):
    log(f"FAILED: the guest run failed (exit {p.returncode}); logs in {res}")
    return 1
  md, csv, raw = build_table(fres, host)
  with open(os.path.join(args.out, "kernel_table_failover.md"), "w") as f:
    f.write(md + "\n")
  with open(os.path.join(args.out, "kernel_table_failover.csv"), "w") as f:
    f.write(csv)
  with open(os.path.join(args.out, "kernel_raw_failover.json"), "w") as f:
    json.dump(raw, f, indent=1)
  print(md)
  log(f"done in {host['wall']:.0f} s; {args.out}/kernel_table_failover.md, guest "
      f"results in {res}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
