#!/usr/bin/env python3
"""Hostile, idle and soak clients for sharemgrd (MOUNT over TCP/UDP, the
management socket). Python stdlib only; each subcommand prints one JSON
line of what it did and exits 0 when every expectation held, 1 otherwise.

  rpc_driver.py hostile --port P --socket S --pid PID --share PATH [--rounds N]
  rpc_driver.py idle --port P --count 1000 --hold-file F
  rpc_driver.py soak --port P --paths-file F --clients 64 --seconds 20
  rpc_driver.py stuck --port P --count 70 --calls 40 --hold-file F
  rpc_driver.py churn --port P --clients 64 --hold-file F
  rpc_driver.py mgmt-flood --socket S --pid PID --mib 64 --parallel 8
  rpc_driver.py udp-ratio --port P
"""
import argparse
import json
import os
import random
import resource
import socket
import struct
import sys
import threading
import time

MOUNT_PROG, MOUNT_V3 = 100005, 3
MGMT_PROG, MGMT_V1 = 0x2053484D, 1
MNT_NULL, MNT_MNT, MNT_DUMP, MNT_UMNT, MNT_UMNTALL, MNT_EXPORT = range(6)


def xdr_u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def xdr_opaque(b):
    pad = (4 - len(b) % 4) % 4
    return xdr_u32(len(b)) + b + b"\0" * pad


def auth_sys(machine=b"reliability", uid=0, gid=0, gids=()):
    body = xdr_u32(int(time.time())) + xdr_opaque(machine) + xdr_u32(uid) + \
        xdr_u32(gid) + xdr_u32(len(gids)) + b"".join(xdr_u32(g) for g in gids)
    return xdr_u32(1) + xdr_opaque(body)


def call_header(xid, prog, vers, proc, cred=None):
    cred = cred if cred is not None else auth_sys()
    return (xdr_u32(xid) + xdr_u32(0) + xdr_u32(2) + xdr_u32(prog) +
            xdr_u32(vers) + xdr_u32(proc) + cred + xdr_u32(0) + xdr_u32(0))


def record(payload):
    return xdr_u32(0x80000000 | len(payload)) + payload


def read_record(sock):
    """One whole record, or None if the peer closed the connection."""
    out = b""
    while True:
        hdr = recv_exact(sock, 4)
        if hdr is None:
            return None
        (mark,) = struct.unpack(">I", hdr)
        frag = recv_exact(sock, mark & 0x7FFFFFFF)
        if frag is None:
            return None
        out += frag
        if mark & 0x80000000:
            return out


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except (ConnectionResetError, socket.timeout, TimeoutError):
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


def parse_reply(data):
    """(xid, accept_stat or ('denied', stat), body) of an RPC reply."""
    xid, mtype, rstat = struct.unpack(">III", data[:12])
    if mtype != 1:
        raise ValueError("not a reply")
    if rstat != 0:
        return xid, ("denied", struct.unpack(">I", data[12:16])[0]), b""
    (flavor, vlen) = struct.unpack(">II", data[12:20])
    off = 20 + vlen + (4 - vlen % 4) % 4
    (astat,) = struct.unpack(">I", data[off:off + 4])
    return xid, astat, data[off + 4:]


class Conn:
    """A stream connection (TCP or Unix) making RPC calls."""

    def __init__(self, family, addr, source=None, timeout=5.0):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        if source is not None:
            self.sock.bind((source, 0))
        self.sock.connect(addr)
        self.xid = random.randrange(1, 1 << 31)

    def call(self, prog, vers, proc, args=b"", cred=None):
        self.xid += 1
        self.sock.sendall(
            record(call_header(self.xid, prog, vers, proc, cred) + args))
        data = read_record(self.sock)
        if data is None:
            raise ConnectionError("connection closed")
        xid, astat, body = parse_reply(data)
        if xid != self.xid:
            raise ValueError("xid mismatch")
        return astat, body

    def close(self):
        self.sock.close()


def mount_conn(port, source=None):
    return Conn(socket.AF_INET, ("127.0.0.1", port), source)


def mnt(conn, path, cred=None):
    astat, body = conn.call(MOUNT_PROG, MOUNT_V3, MNT_MNT, xdr_opaque(path),
                            cred)
    if astat != 0:
        return ("rpc", astat)
    (status,) = struct.unpack(">I", body[:4])
    fh = None
    if status == 0:
        (n,) = struct.unpack(">I", body[4:8])
        fh = body[8:8 + n]
    return status, fh


def parse_dump(body):
    out, off = [], 0
    while struct.unpack(">I", body[off:off + 4])[0] == 1:
        off += 4
        vals = []
        for _ in range(2):
            (n,) = struct.unpack(">I", body[off:off + 4])
            vals.append(body[off + 4:off + 4 + n].decode())
            off += 4 + n + (4 - n % 4) % 4
        out.append(tuple(vals))
    return out


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


# ---------------------------------------------------------------- hostile

def expect_error_or_close(sock, what, results):
    """Reads until a reply record or close; records what happened."""
    data = read_record(sock)
    if data is None:
        results[what] = results.get(what, 0) + 1
        return "closed"
    try:
        _, astat, _ = parse_reply(data)
    except Exception:
        raise AssertionError(f"{what}: unparsable reply {data[:32]!r}")
    if astat == 0:
        return "success"
    results[what] = results.get(what, 0) + 1
    return "error"


def hostile_stream_cases(prog, vers, proc_with_list, list_args_prefix):
    """(name, bytes, expects_reply) hostile payloads for one stream port."""
    cases = []
    rnd = random.Random(7)
    for i in range(8):
        cases.append((f"random{i}", bytes(rnd.randrange(256)
                                          for _ in range(rnd.randrange(1, 600))), False))
    hdr = call_header(1, prog, vers, proc_with_list)
    cases.append(("truncated_record", xdr_u32(0x80000000 | 400) + hdr[:20], False))
    cases.append(("truncated_call_header", record(hdr[:17]), True))
    cases.append(("mark_2GiB", xdr_u32(0xFFFFFFFF) + b"x" * 64, False))
    cases.append(("mark_2GiB_nonlast", xdr_u32(0x7FFFFFFF) + b"x" * 64, False))
    # 4 GiB claimed as two non-last fragments of 2 GiB - 1 bytes and more.
    cases.append(("mark_4GiB_fragments",
                  xdr_u32(0x7FFFFFFF) + xdr_u32(0x7FFFFFFF) + b"y" * 64, False))
    # Many small non-last fragments: the record grows past any limit.
    cases.append(("endless_fragments", (xdr_u32(1024) + b"z" * 1024) * 80, False))
    cases.append(("huge_list", record(hdr + list_args_prefix + xdr_u32(0x80000000)), True))
    cases.append(("huge_list_2^31-1", record(hdr + list_args_prefix + xdr_u32(0x7FFFFFFF)), True))
    cases.append(("wrong_program", record(call_header(2, 99, 1, 0)), True))
    cases.append(("wrong_rpc_version", record(
        xdr_u32(3) + xdr_u32(0) + xdr_u32(3) + xdr_u32(prog) + xdr_u32(vers) +
        xdr_u32(0) + xdr_u32(0) + xdr_u32(0) + xdr_u32(0) + xdr_u32(0)), True))
    cases.append(("bad_auth_length", record(
        xdr_u32(4) + xdr_u32(0) + xdr_u32(2) + xdr_u32(prog) + xdr_u32(vers) +
        xdr_u32(0) + xdr_u32(1) + xdr_u32(0xFFFFFFF0)), True))
    return cases


def run_stream_case(family, addr, name, payload, results, timeout=5.0):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(addr)
    try:
        s.sendall(payload)
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    except (BrokenPipeError, ConnectionResetError):
        results[name] = results.get(name, 0) + 1
        s.close()
        return "closed"
    t0 = time.time()
    outcome = expect_error_or_close(s, name, results)
    s.close()
    elapsed = time.time() - t0
    if elapsed >= timeout:
        raise AssertionError(f"{name}: no answer and no close within {timeout} s")
    if elapsed >= 0.5:
        outcome += f" after {elapsed:.1f} s"
    if outcome == "success":
        raise AssertionError(f"{name}: hostile input got a successful reply")
    return outcome


def well_behaved(port, sock_path, share):
    c = mount_conn(port)
    astat, _ = c.call(MOUNT_PROG, MOUNT_V3, MNT_NULL)
    status, fh = mnt(c, share.encode())
    astat2, _ = c.call(MOUNT_PROG, MOUNT_V3, MNT_UMNT, xdr_opaque(share.encode()))
    c.close()
    if astat != 0 or status != 0 or not fh or astat2 != 0:
        raise AssertionError(f"well-behaved MOUNT client not served: {astat} {status}")
    m = Conn(socket.AF_UNIX, sock_path)
    astat, body = m.call(MGMT_PROG, MGMT_V1, 2)  # LIST_GROUPS
    m.close()
    if astat != 0 or struct.unpack(">I", body[:4])[0] != 0:
        raise AssertionError("well-behaved management client not served")


def hostile(args):
    results, served, outcomes = {}, 0, {}
    rss = [vm_rss_kib(args.pid)]
    mount_cases = hostile_stream_cases(MOUNT_PROG, MOUNT_V3, MNT_MNT, b"")
    # MNT with a 1,025-byte path, over TCP: an error status or RPC error.
    long_path = ("/" + "p" * 1024).encode()
    mgmt_cases = hostile_stream_cases(MGMT_PROG, MGMT_V1, 1, b"")
    # A BATCH whose one op carries a string length of 4 GiB - 1.
    mgmt_cases.append(("batch_op_huge_string", record(
        call_header(9, MGMT_PROG, MGMT_V1, 1) + xdr_u32(1) + xdr_u32(0) +
        xdr_u32(0xFFFFFFFF)), True))
    # LIST_SHARES naming 2^30 groups.
    mgmt_cases.append(("list_shares_2^30_groups", record(
        call_header(10, MGMT_PROG, MGMT_V1, 3) + xdr_u32(1 << 30)), True))
    for rnd in range(args.rounds):
        for name, payload, _ in mount_cases:
            o = run_stream_case(socket.AF_INET, ("127.0.0.1", args.port),
                                "tcp_" + name, payload, results)
            outcomes["tcp_" + name] = o
        for name, payload, _ in mgmt_cases:
            o = run_stream_case(socket.AF_UNIX, args.socket, "mgmt_" + name,
                                payload, results)
            outcomes["mgmt_" + name] = o
        c = mount_conn(args.port)
        status, fh = mnt(c, long_path)
        c.close()
        if status == 0:
            raise AssertionError("MNT of a 1,025-byte path got a file handle")
        outcomes["tcp_mnt_1025_byte_path"] = f"status {status}"
        # UDP: random datagrams, truncated calls, huge list; then a real call.
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.settimeout(0.1)  # a dropped datagram costs this much
        r = random.Random(rnd)
        for name, payload, _ in mount_cases:
            data = payload[4:] if name.startswith(("trunc", "huge", "wrong", "bad")) else payload
            u.sendto(data[:65000], ("127.0.0.1", args.port))
            try:
                reply, _ = u.recvfrom(65536)
                _, astat, _ = parse_reply(reply)
                if astat == 0:
                    raise AssertionError(f"udp_{name}: successful reply")
                outcomes["udp_" + name] = "error"
            except socket.timeout:
                outcomes["udp_" + name] = "dropped"
        u.sendto(bytes(r.randrange(256) for _ in range(1200)), ("127.0.0.1", args.port))
        u.sendto(call_header(77, MOUNT_PROG, MOUNT_V3, MNT_MNT) + xdr_opaque(long_path),
                 ("127.0.0.1", args.port))
        try:
            reply, _ = u.recvfrom(65536)
            _, astat, body = parse_reply(reply)
            if astat == 0 and struct.unpack(">I", body[:4])[0] == 0:
                raise AssertionError("UDP MNT of a 1,025-byte path succeeded")
            outcomes["udp_mnt_1025_byte_path"] = "error"
        except socket.timeout:
            outcomes["udp_mnt_1025_byte_path"] = "dropped"
        u.settimeout(2)
        u.sendto(call_header(78, MOUNT_PROG, MOUNT_V3, MNT_NULL), ("127.0.0.1", args.port))
        reply = b""
        while True:  # skip late replies to earlier datagrams
            reply, _ = u.recvfrom(65536)
            if struct.unpack(">I", reply[:4])[0] == 78:
                break
        if parse_reply(reply)[1] != 0:
            raise AssertionError("UDP NULL not served")
        u.close()
        well_behaved(args.port, args.socket, args.share)
        served += 1
        rss.append(vm_rss_kib(args.pid))
    print(json.dumps({"rounds": args.rounds, "well_behaved_rounds_served": served,
                      "rss_kib": {"start": rss[0], "after_round1": rss[1],
                                  "end": rss[-1], "max": max(rss)},
                      "outcomes": outcomes}))
    # Bounded: after the first round (buffers, threads warmed), growth over
    # the remaining rounds stays under the bound (8 MiB; more under ASan,
    # whose quarantine holds freed memory).
    if rss[-1] - rss[1] > args.rss_bound_kib:
        print(f"RSS grew {rss[-1] - rss[1]} KiB after warm-up", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------- idle

def idle(args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.count + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(want, soft), hard), hard))
    conns = []
    for i in range(args.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.connect(("127.0.0.1", args.port))
        conns.append(s)
    # Half of them also send a partial record and then go quiet.
    for s in conns[::2]:
        s.sendall(xdr_u32(0x80000000 | 100) + b"abcd")
    print(json.dumps({"idle_connections": len(conns)}), flush=True)
    with open(args.hold_file, "w") as f:
        f.write("ready\n")
    # Hold until the test removes the file (or 120 s pass).
    deadline = time.time() + 120
    while os.path.exists(args.hold_file) and time.time() < deadline:
        time.sleep(0.05)
    closed = 0
    for s in conns:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except ConnectionResetError:
            closed += 1
        s.close()
    print(json.dumps({"closed_by_daemon": closed}))
    return 0


# ------------------------------------------------------------------- soak

def soak(args):
    paths = [p.strip() for p in open(args.paths_file) if p.strip()]
    stop = time.time() + args.seconds
    lock = threading.Lock()
    totals = {"mnt_ok": 0, "mnt_acces": 0, "umnt": 0, "errors": []}
    mounted = {}  # source -> set(paths) currently mounted

    def client(i):
        src = f"127.0.{1 + i // 200}.{1 + i % 200}"
        mine = set()
        r = random.Random(i)
        try:
            c = mount_conn(args.port, src)
            while time.time() < stop:
                p = r.choice(paths)
                if p in mine and r.random() < 0.6:
                    astat, _ = c.call(MOUNT_PROG, MOUNT_V3, MNT_UMNT, xdr_opaque(p.encode()))
                    if astat != 0:
                        raise AssertionError(f"UMNT rpc error {astat}")
                    mine.discard(p)
                    with lock:
                        totals["umnt"] += 1
                    continue
                status, fh = mnt(c, p.encode())
                with lock:
                    if status == 0 and fh:
                        totals["mnt_ok"] += 1
                        mine.add(p)
                    elif status == 13:  # ACCES: share being removed
                        totals["mnt_acces"] += 1
                    else:
                        totals["errors"].append(f"{src} MNT {p}: {status}")
            c.close()
        except Exception as e:  # noqa: BLE001 - reported as a test error
            with lock:
                totals["errors"].append(f"{src}: {e!r}")
        with lock:
            mounted[src] = mine

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    rss = []
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        if args.pid:
            rss.append(vm_rss_kib(args.pid))
        time.sleep(1)
    for t in threads:
        t.join()
    c = mount_conn(args.port)
    astat, body = c.call(MOUNT_PROG, MOUNT_V3, MNT_DUMP)
    c.close()
    dump = set(parse_dump(body)) if astat == 0 else None
    want = {(src, p) for src, ps in mounted.items() for p in ps}
    lost = sorted(want - dump) if dump is not None else ["DUMP failed"]
    extra = sorted(dump - want) if dump is not None else []
    warm = rss[len(rss) // 4:] if rss else []
    out = {"clients": args.clients, "seconds": args.seconds,
           "mnt_ok": totals["mnt_ok"], "mnt_acces": totals["mnt_acces"],
           "umnt": totals["umnt"], "errors": totals["errors"][:10],
           "error_count": len(totals["errors"]), "mounted_at_end": len(want),
           "dump_records": len(dump or ()), "lost": lost[:10], "extra": extra[:10],
           "rss_kib_after_warmup": {"min": min(warm), "max": max(warm)} if warm else {}}
    print(json.dumps(out))
    ok = not totals["errors"] and not lost and not extra and totals["mnt_ok"] > 0
    return 0 if ok else 1

# ------------------------------------------------------------------ stuck

def stuck(args):
    """Connections that pipeline EXPORT calls and never read the replies."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.count + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(args.count + 256, hard), hard))
    calls = b"".join(
        record(call_header(i + 1, MOUNT_PROG, MOUNT_V3, MNT_EXPORT, xdr_u32(0) + xdr_u32(0)))
        for i in range(args.calls))
    conns = []
    for _ in range(args.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # A small receive buffer: the replies back up on the daemon's side.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", args.port))
        s.setblocking(False)
        try:
            s.send(calls)
        except BlockingIOError:
            pass
        conns.append(s)
    print(json.dumps({"stuck_connections": len(conns), "calls_each": args.calls}), flush=True)
    with open(args.hold_file, "w") as f:
        f.write("ready\n")
    deadline = time.time() + 120
    while os.path.exists(args.hold_file) and time.time() < deadline:
        time.sleep(0.05)
    for s in conns:
        s.close()
    return 0


# ------------------------------------------------------------------ churn

def churn(args):
    """Chatty MOUNT clients: each makes a few NULL calls on a connection,
    then opens a new one, so that connections keep arriving."""
    stop = threading.Event()
    counts = {"calls": 0, "connections": 0, "errors": 0}
    lock = threading.Lock()

    def client(i):
        r = random.Random(i)
        while not stop.is_set():
            try:
                c = mount_conn(args.port)
                with lock:
                    counts["connections"] += 1
                for _ in range(r.randint(1, 5)):
                    c.call(MOUNT_PROG, MOUNT_V3, MNT_NULL)
                    with lock:
                        counts["calls"] += 1
                c.close()
            except (OSError, ConnectionError, ValueError):
                with lock:
                    counts["errors"] += 1  # evicted by another: expected

    threads = [threading.Thread(target=client, args=(i,), daemon=True)
               for i in range(args.clients)]
    for t in threads:
        t.start()
    with open(args.hold_file, "w") as f:
        f.write("ready\n")
    deadline = time.time() + 120
    while os.path.exists(args.hold_file) and time.time() < deadline:
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    print(json.dumps(counts))
    return 0


# ------------------------------------------------------------- mgmt-flood

def mgmt_flood(args):
    """Big BATCH records on the management socket (run it as a caller who
    may not change anything): whole ones from --parallel connections, and
    --incomplete ones that announce --mib MiB and stop half-way. Prints the
    daemon's RSS growth; every big call must be refused or closed."""
    size = args.mib << 20
    body = call_header(1, MGMT_PROG, MGMT_V1, 1, xdr_u32(0) + xdr_u32(0))
    # An ops array as long as the record: count, then filler words.
    n_words = (size - len(body) - 8) // 4
    payload = body + xdr_u32(n_words) + b"\0" * (n_words * 4)
    base = vm_rss_kib(args.pid)
    peak = [base]
    outcomes = []
    lock = threading.Lock()
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], vm_rss_kib(args.pid))
            time.sleep(0.01)

    def whole(i):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(args.socket)
        try:
            s.sendall(record(payload))
            data = read_record(s)
            what = "closed" if data is None else "replied"
        except (BrokenPipeError, ConnectionResetError):
            what = "closed"
        s.close()
        with lock:
            outcomes.append(what)

    def incomplete(i):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(args.socket)
        try:
            s.sendall(record(payload)[: 4 + size // 2])
        except (BrokenPipeError, ConnectionResetError):
            pass
        return s

    sampler = threading.Thread(target=sample)
    sampler.start()
    threads = [threading.Thread(target=whole, args=(i,)) for i in range(args.parallel)]
    for t in threads:
        t.start()
    held = [incomplete(i) for i in range(args.incomplete)]
    for t in threads:
        t.join()
    time.sleep(0.5)  # what the incomplete records hold
    done.set()
    sampler.join()
    for s in held:
        s.close()
    out = {"mib": args.mib, "parallel": args.parallel, "incomplete": args.incomplete,
           "rss_before_kib": base, "rss_peak_kib": peak[0],
           "growth_kib": peak[0] - base, "outcomes": outcomes}
    print(json.dumps(out))
    return 0 if peak[0] - base <= args.rss_bound_kib else 1


# ------------------------------------------------------------ mgmt-unread

def mgmt_unread(args):
    """Management connections (run it as a caller who may not change
    anything) that each send one listing call (LIST_SHARES of every group,
    or SHARETAB) and do not read the reply for --hold seconds. Prints the
    daemon's RSS growth meanwhile; then reads every reply: each is the
    listing or a refusal, never lost."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.count + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(args.count + 256, hard), hard))
    base = vm_rss_kib(args.pid)
    conns = []
    for i in range(args.count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(args.socket)
        # LIST_SHARES with groups<> empty (every group), or SHARETAB.
        proc = 3 if i % 2 == 0 else 4
        body = xdr_u32(0) if proc == 3 else b""
        s.sendall(record(call_header(i + 1, MGMT_PROG, MGMT_V1, proc) + body))
        conns.append(s)
    peak = base
    deadline = time.time() + args.hold
    while time.time() < deadline:
        peak = max(peak, vm_rss_kib(args.pid))
        time.sleep(0.02)
    # Every reply read at once, as that many clients would: read one after
    # another, the last ones would wait past the daemon's send timeout
    # (10 s without progress closes a connection) on a busy machine.
    replies = [None] * len(conns)

    def read_one(i):
        conns[i].settimeout(30)
        try:
            replies[i] = read_record(conns[i])
        except (OSError, socket.timeout):
            pass

    readers = [threading.Thread(target=read_one, args=(i,)) for i in range(len(conns))]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    listed = refused = lost = 0
    for s, data in zip(conns, replies):
        if data is None:
            lost += 1
        elif len(data) > 4096:
            listed += 1
        else:
            refused += 1
        s.close()
    out = {"connections": args.count, "rss_before_kib": base, "rss_peak_kib": peak,
           "growth_kib": peak - base, "listed": listed, "refused": refused, "lost": lost}
    print(json.dumps(out))
    return 0 if peak - base <= args.rss_bound_kib and lost == 0 else 1


# -------------------------------------------------------------- udp-ratio

def udp_ratio(args):
    """The largest reply-to-call size ratio over UDP for the calls anyone
    can send without credentials (NULL, EXPORT v1/v3, EXPORTALL, DUMP)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    worst = 0.0
    sizes = {}
    for vers, proc, name in [(3, MNT_NULL, "null"), (1, MNT_EXPORT, "export_v1"),
                             (3, MNT_EXPORT, "export_v3"), (1, 6, "exportall_v1"),
                             (3, MNT_DUMP, "dump_v3")]:
        call = call_header(random.randrange(1 << 31), MOUNT_PROG, vers, proc,
                           xdr_u32(0) + xdr_u32(0))
        s.sendto(call, ("127.0.0.1", args.port))
        try:
            reply, _ = s.recvfrom(70000)
        except socket.timeout:
            reply = b""
        sizes[name] = [len(call), len(reply)]
        worst = max(worst, len(reply) / len(call))
    print(json.dumps({"sizes": sizes, "worst_ratio": round(worst, 2)}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hostile")
    h.add_argument("--port", type=int, required=True)
    h.add_argument("--socket", required=True)
    h.add_argument("--pid", type=int, required=True)
    h.add_argument("--share", required=True)
    h.add_argument("--rounds", type=int, default=5)
    h.add_argument("--rss-bound-kib", type=int, default=8 * 1024)
    i = sub.add_parser("idle")
    i.add_argument("--port", type=int, required=True)
    i.add_argument("--count", type=int, default=1000)
    i.add_argument("--hold-file", required=True)
    s = sub.add_parser("soak")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--paths-file", required=True)
    s.add_argument("--clients", type=int, default=64)
    s.add_argument("--seconds", type=float, default=20)
    s.add_argument("--pid", type=int, default=0)
    st = sub.add_parser("stuck")
    st.add_argument("--port", type=int, required=True)
    st.add_argument("--count", type=int, default=70)
    st.add_argument("--calls", type=int, default=40)
    st.add_argument("--hold-file", required=True)
    ch = sub.add_parser("churn")
    ch.add_argument("--port", type=int, required=True)
    ch.add_argument("--clients", type=int, default=64)
    ch.add_argument("--hold-file", required=True)
    mf = sub.add_parser("mgmt-flood")
    mf.add_argument("--socket", required=True)
    mf.add_argument("--pid", type=int, required=True)
    mf.add_argument("--mib", type=int, default=64)
    mf.add_argument("--parallel", type=int, default=1)
    mf.add_argument("--incomplete", type=int, default=0)
    mf.add_argument("--rss-bound-kib", type=int, default=64 * 1024)
    mu = sub.add_parser("mgmt-unread")
    mu.add_argument("--socket", required=True)
    mu.add_argument("--pid", type=int, required=True)
    mu.add_argument("--count", type=int, default=250)
    mu.add_argument("--hold", type=float, default=3.0)
    mu.add_argument("--rss-bound-kib", type=int, default=64 * 1024)
    ur = sub.add_parser("udp-ratio")
    ur.add_argument("--port", type=int, required=True)
    a = ap.parse_args()
    try:
        return {"hostile": hostile, "idle": idle, "soak": soak, "stuck": stuck,
                "churn": churn, "mgmt-flood": mgmt_flood, "mgmt-unread": mgmt_unread,
                "udp-ratio": udp_ratio}[a.cmd](a)
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
