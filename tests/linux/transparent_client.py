#!/usr/bin/env python3
"""transparent_client.py - clients that ignore the proxy, run inside the sandbox
by tests/linux/transparent.sh.  None reads a proxy variable.

  resolve NAME...            each name's address ("NAME ADDRESS" or "NAME error: ...")
  https HOST PORT PATH [HOST-HEADER]
                             http.client.HTTPSConnection: "status N", the body
  http HOST PORT PATH [HOST-HEADER]
                             http.client.HTTPConnection: the same
  sni HOST PORT SNI          TLS to HOST's address with SNI as the server name:
                             "handshake ok" or "handshake failed: ..."
  tcp HOST PORT DATA         a socket client: send DATA, shut down the sending
                             side, print "stream: " and what came back
  connect HOST PORT          "connected" or "refused: ..." (nothing sent)
  stable N                   N distinct names, resolved twice: "distinct D stable S
                             block B" (B: how many lie in 127.128.0.0/16)
  flood N                    N distinct names straight to the resolver over UDP:
                             "answered A refused R other O", then whether the first
                             name kept its address ("first kept") and a new one is
                             refused ("new refused")
  caps                       the capability sets of this process, and whether it
                             can bind port 80
"""
import errno
import http.client
import socket
import ssl
import struct
import sys

TIMEOUT = 20


def out(s):
    sys.stdout.write(s + "\n")
    sys.stdout.flush()


def resolve(names):
    for n in names:
        try:
            out("%s %s" % (n, socket.gethostbyname(n)))
        except OSError as e:
            out("%s error: %s" % (n, e))


def request(kind, host, port, path, hosthdr):
    cls = http.client.HTTPSConnection if kind == "https" else http.client.HTTPConnection
    try:
        c = cls(host, int(port), timeout=TIMEOUT)
        c.putrequest("GET", path, skip_host=bool(hosthdr))
        if hosthdr:
            c.putheader("Host", hosthdr)
        c.endheaders()
        r = c.getresponse()
        out("status %d" % r.status)
        for k, v in r.getheaders():
            out("%s: %s" % (k, v))
        out(r.read().decode("latin-1"))
    except (OSError, http.client.HTTPException) as e:
        out("failed: %s: %s" % (type(e).__name__, e))


def sni(host, port, name):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    try:
        s = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        t = ctx.wrap_socket(s, server_hostname=name)
        t.close()
        out("handshake ok")
    except (OSError, ssl.SSLError) as e:
        out("handshake failed: %s" % e)


def tcp(host, port, data):
    got = b""
    try:
        s = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        s.sendall(data.encode("latin-1").decode("unicode_escape").encode("latin-1"))
        s.shutdown(socket.SHUT_WR)
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
        out("stream: " + got.decode("latin-1") if got else "closed-at-once")
    except OSError as e:
        # Accepted, then closed before a byte came back: the close can reach
        # us before our own send or shutdown (ENOTCONN, ECONNRESET, EPIPE).
        if e.errno in (errno.ENOTCONN, errno.ECONNRESET, errno.EPIPE) and not got:
            out("closed-at-once")
        else:
            out("refused: %s" % e)


def connect(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=TIMEOUT).close()
        out("connected")
    except OSError as e:
        out("refused: %s" % e)


def in_block(a):
    return a.startswith("127.128.")


def stable(n):
    names = ["n%d.stable.test" % i for i in range(n)]
    first = [socket.gethostbyname(x) for x in names]
    again = [socket.gethostbyname(x.upper()) for x in names]
    out("distinct %d stable %d block %d" % (len(set(first)),
                                            sum(a == b for a, b in zip(first, again)),
                                            sum(in_block(a) for a in first)))


def query(sock, qid, name, qtype=1):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", qtype, 1)
    sock.sendto(q, ("127.0.0.53", 53))


def flood(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    first = socket.gethostbyname("flood-first.test")
    counts = {"answered": 0, "refused": 0, "other": 0}
    sent = 0
    window = 64
    got = 0
    while got < n:
        while sent < n and sent - got < window:
            query(s, sent & 0xFFFF, "f%d.flood.test" % sent)
            sent += 1
        try:
            r = s.recv(512)
        except socket.timeout:
            break
        got += 1
        rcode = r[3] & 15
        ancount = struct.unpack(">H", r[6:8])[0]
        if rcode == 0 and ancount == 1:
            counts["answered"] += 1
        elif rcode == 5:
            counts["refused"] += 1
        else:
            counts["other"] += 1
    out("answered %d refused %d other %d" % (counts["answered"], counts["refused"],
                                             counts["other"]))
    out("first kept" if socket.gethostbyname("flood-first.test") == first else "first changed")
    try:
        socket.gethostbyname("after-the-flood.test")
        out("new answered")
    except OSError:
        out("new refused")


def caps():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd")):
                out(line.strip())
    try:
        s = socket.socket()
        s.bind(("0.0.0.0", 80))
        out("bound port 80")
    except OSError as e:
        out("bind 80: %s" % e)


def main(a):
    cmd = a[0]
    if cmd == "resolve":
        resolve(a[1:])
    elif cmd in ("https", "http"):
        request(cmd, a[1], a[2], a[3], a[4] if len(a) > 4 else None)
    elif cmd == "sni":
        sni(a[1], a[2], a[3])
    elif cmd == "tcp":
        tcp(a[1], a[2], a[3])
    elif cmd == "connect":
        connect(a[1], a[2])
    elif cmd == "stable":
        stable(int(a[1]))
    elif cmd == "flood":
        flood(int(a[1]))
    elif cmd == "caps":
        caps()
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
