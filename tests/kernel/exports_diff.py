#!/usr/bin/python3
"""Differential test of exports(5) semantics: rpc.mountd against sharemgrd.

Run by scenarios/sharemgrd_exports_differential.sh inside the kernel guest,
with rpc.mountd (the peer) and sharemgrd --kernel=off --follow-exports
FOLLOWED (ours) both running. For each case: the same exports text goes to
/etc/exports (exportfs -ra; rpc.mountd decides) and to FOLLOWED (sharemgrd
mirrors it); then for each client address 127.0.0.2-12 and each path:
- rpc.mountd's decision: a MNT v3 from that source address (a reserved
  port), and for an accepted one the kernel entry it wrote (auth.unix.ip
  names the client's domain, nfsd.export the flags: ro/rw, root_squash);
- ours: the management CHECK call that `sharectl check ADDR PATH` makes
  (access none/ro/rw, root kept or not).
Both are asked in process (a process per question costs a few hundred ms
under TCG).
Cases are a few hand-written tricky ones and seeded random ones over
addresses, networks (prefix and netmask), "*", the default client, "-opts"
defaults, per-client rw/ro and root squashing. A case the follower refuses
is counted and printed, not compared.
Prints one line per mismatch and a summary; exits 1 on any mismatch.
"""
import json
import os
import random
import re
import socket
import struct
import subprocess
import sys
import time

SHARECTL, SOCKET, FOLLOWED, NCASES, SEED, SMLOG = sys.argv[1:7]
PATHS = ["/srv/a", "/srv/b"]
CLIENTS = ["127.0.0.%d" % i for i in range(2, 13)]


def run(*args, check=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit("%s failed: %s" % (" ".join(args), p.stderr))
    return p


def mountd_port():
    out = run("rpcinfo", "-p", "127.0.0.1").stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 5 and f[1] == "3" and f[2] == "tcp" and f[4] == "mountd":
            return f[3]
    raise SystemExit("rpc.mountd not registered")


def content(cache):
    with open("/proc/net/rpc/%s/content" % cache) as f:
        return [l.rstrip("\n") for l in f if not l.startswith("#")]


# ONC RPC over a stream socket, in process: a process per question costs
# a few hundred ms under TCG, which would allow only a few dozen cases.
def xdr_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


XID = [1]


def rpc_call(sock, prog, vers, proc, cred, args):
    XID[0] += 1
    msg = struct.pack(">IIIIII", XID[0], 0, 2, prog, vers, proc) + cred + \
        struct.pack(">II", 0, 0) + args
    sock.sendall(struct.pack(">I", 0x80000000 | len(msg)) + msg)
    data = b""
    while True:
        hdr = b""
        while len(hdr) < 4:
            chunk = sock.recv(4 - len(hdr))
            if not chunk:
                raise SystemExit("RPC connection closed")
            hdr += chunk
        (mark,) = struct.unpack(">I", hdr)
        n = mark & 0x7FFFFFFF
        while n > 0:
            chunk = sock.recv(n)
            if not chunk:
                raise SystemExit("RPC connection closed")
            data += chunk
            n -= len(chunk)
        if mark & 0x80000000:
            break
    xid, mtype, rstat = struct.unpack(">III", data[:12])
    if mtype != 1 or rstat != 0:
        raise SystemExit("RPC call denied")
    vlen = struct.unpack(">I", data[16:20])[0]
    off = 20 + vlen + (-vlen % 4)
    (accept,) = struct.unpack(">I", data[off:off + 4])
    if accept != 0:
        raise SystemExit("RPC call not accepted: %d" % accept)
    return data[off + 4:]


AUTH_SYS_ROOT = struct.pack(">II", 1, 20) + struct.pack(">I", 0) + \
    xdr_string("") + struct.pack(">III", 0, 0, 0)


def mnt(port, client, path):
    """MNT v3 from `client` (a reserved source port): True if MNT3_OK."""
    for src_port in range(1023, 600, -1):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((client, src_port))
            s.connect(("127.0.0.1", int(port)))
            break
        except OSError:
            s.close()
    else:
        raise SystemExit("no reserved port free")
    try:
        res = rpc_call(s, 100005, 3, 1, AUTH_SYS_ROOT, xdr_string(path))
    finally:
        s.close()
    return struct.unpack(">I", res[:4])[0] == 0


def mountd_decision(port, client, path):
    if not mnt(port, client, path):
        return ("none", False)
    domain = None
    for l in content("auth.unix.ip"):
        f = l.split()
        if len(f) >= 3 and f[0] == "nfsd" and f[1] == client:
            domain = f[2]
    if domain is None:
        return ("?no auth.unix.ip entry", False)
    for l in content("nfsd.export"):
        m = re.match(r"^(\S+)\s+(\S+)\((.*)\)$", l)
        if m and m.group(1) == path and m.group(2) == domain:
            flags = m.group(3).split(",")
            return ("ro" if "ro" in flags else "rw",
                    "no_root_squash" in flags)
    return ("?no nfsd.export entry for %s %s" % (path, domain), False)


MGMT = []


def our_decision(client, path):
    """CHECK (the same call as `sharectl check`) on the management socket."""
    if not MGMT:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(SOCKET)
        MGMT.append(s)
    res = rpc_call(MGMT[0], 0x2053484D, 1, 5, struct.pack(">II", 0, 0),
                   xdr_string(client) + xdr_string(path) + xdr_string("sys"))
    (status,) = struct.unpack(">I", res[:4])
    off = 4
    strings = []
    for _ in range(3):  # client, address, access
        (n,) = struct.unpack(">I", res[off:off + 4])
        strings.append(res[off + 4:off + 4 + n].decode())
        off += 4 + n + (-n % 4)
    if status != 0:
        return ("?check failed: " + strings[0], False)
    (root,) = struct.unpack(">I", res[off:off + 4])
    if strings[2] == "none":
        return ("none", False)
    return (strings[2], bool(root))


def group_state():
    p = run(SHARECTL, "--socket", SOCKET, "--json", "list", check=False)
    for g in json.loads(p.stdout)["groups"]:
        if g["name"] == "exports-diff":
            return g
    return None


def follower_outcomes():
    """The follower's log lines that end the handling of one version."""
    with open(SMLOG) as f:
        return [l for l in f if ("follow: " + FOLLOWED) in l and (
            "keeps its last good state" in l or "group exports-diff:" in l or
            "exports-diff unchanged" in l)]


def apply_ours(text):
    """Writes FOLLOWED by rename; waits until the follower handled it."""
    tmp = FOLLOWED + ".tmp"
    before = len(follower_outcomes())
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, FOLLOWED)
    deadline = time.time() + 20
    while time.time() < deadline:
        time.sleep(0.05)
        if len(follower_outcomes()) > before:
            g = group_state()
            return g.get("follow_error", "") if g else "no group"
    raise SystemExit("the follower did not handle the new version in 20 s")


SPECS = ["127.0.0.%d" % i for i in range(2, 13)] + [
    "127.0.0.0/29", "127.0.0.8/29", "127.0.0.0/255.255.255.248",
    "127.0.0.4/30", "127.0.0.0/28", "*", ""]
OPTS = ["rw", "ro", "rw,no_root_squash", "ro,no_root_squash", "root_squash",
        "no_root_squash", "", "rw,root_squash"]

HAND = [
    # The first match in rpc.mountd's order (hosts, networks, *), not file
    # order.
    "/srv/a *(rw,no_root_squash) 127.0.0.5(ro) 127.0.0.0/29(ro)\n",
    # Default client ("(opts)" alone) and the -opts defaults of a line.
    "/srv/a -ro,no_root_squash 127.0.0.3 127.0.0.4(rw)\n/srv/b (rw)\n",
    # Netmask and prefix; continuation; quoted path.
    "\"/srv/a\" 127.0.0.8/255.255.255.252(rw) \\\n  127.0.0.0/28(ro)\n",
    # A client named twice: the first one counts.
    "/srv/a 127.0.0.2(ro) 127.0.0.2(rw) 127.0.0.3(rw)\n",
    # Two lines for one path merge.
    "/srv/b 127.0.0.2(rw)\n/srv/b 127.0.0.0/28(ro,no_root_squash)\n",
    # Overlapping networks, narrower later in the file.
    "/srv/a 127.0.0.0/28(ro) 127.0.0.4/30(rw,no_root_squash)\n",
]


def random_case(rng):
    lines = []
    for path in rng.sample(PATHS, rng.randint(1, 2)):
        words = [path]
        if rng.random() < 0.2:
            words.append("-" + rng.choice(["ro", "rw", "no_root_squash"]))
        for _ in range(rng.randint(1, 4)):
            spec = rng.choice(SPECS)
            opts = rng.choice(OPTS)
            opts = ",".join(x for x in [opts, "no_subtree_check"] if x)
            words.append("%s(%s)" % (spec, opts))
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


def main():
    rng = random.Random(int(SEED))
    cases = HAND + [random_case(rng) for _ in range(int(NCASES))]
    port = mountd_port()
    compared = refused = mismatches = 0
    for n, text in enumerate(cases):
        with open("/etc/exports", "w") as f:
            f.write(text)
        # exportfs exits 1 after ignoring a duplicate entry; what it kept is
        # compared all the same.
        run("exportfs", "-ra", check=False)
        error = apply_ours(text)
        if error:
            refused += 1
            print("case %d: refused by sharemgr: %s" % (n, error))
            continue
        for path in PATHS:
            for c in CLIENTS:
                theirs = mountd_decision(port, c, path)
                ours = our_decision(c, path)
                compared += 1
                if theirs != ours:
                    mismatches += 1
                    print("MISMATCH case %d %s %s: rpc.mountd %s, sharemgr %s"
                          "\n%s" % (n, c, path, theirs, ours, text))
    print("cases %d, refused %d, decisions compared %d, mismatches %d"
          % (len(cases), refused, compared, mismatches))
    return 1 if mismatches or compared == 0 else 0


sys.exit(main())
