#!/usr/bin/env python3
"""e2e_client.py - raw HTTP through the egress proxy, for tests/proxy/e2e.sh.

Curl cannot send malformed requests or mismatched names, so these cases
speak to the relay's port directly:

  e2e_client.py plain PORT REQUEST
      send REQUEST (Python string escapes allowed: \\r\\n, \\x00) on a plain
      connection and print everything that comes back until the proxy closes
      the connection or stays silent for a second.
  e2e_client.py halfclose PORT REQUEST
      like plain, but shut the sending side down right after REQUEST: the
      answer must still arrive (half-close travels through relay and proxy).
  e2e_client.py tunnel PORT HOST:PORT CAFILE SNI REQUEST [REQUEST...]
      CONNECT to HOST:PORT, TLS inside the tunnel with SNI (verified against
      CAFILE for HOST), then send each REQUEST in turn on the same
      connection, printing all responses.  Prints "connect-refused" and the
      proxy's answer when CONNECT is not answered 200, "handshake-refused:
      REASON" when TLS fails.

  e2e_client.py ws PORT HOST:PORT CAFILE PATH [AFTER]
      CONNECT and TLS as tunnel does, then a WebSocket upgrade of PATH; prints
      the answer's head, and after a 101 sends a masked text frame
      "hello-ws" and prints "ws-echo: PAYLOAD" for the frame that comes back;
      then sends AFTER (escapes allowed) and prints "ws-after: closed" when
      the proxy closes the connection, "ws-after: open" otherwise.

  e2e_client.py trickle PORT SECONDS
      send the start of a request head, then one more byte every second,
      for at most SECONDS; prints "closed after N s" when the proxy closes
      the connection, "open after N s" otherwise.

  e2e_client.py transparent PORT HOST:PORT tls CAFILE SNI REQUEST [REQUEST...]
  e2e_client.py transparent PORT HOST:PORT plain REQUEST [REQUEST...]
  e2e_client.py transparent PORT HOST:PORT raw DATA
      as the relay in the sandbox does for a client that ignores the proxy:
      a CONNECT marked "Omnibox-Transparent: 1" and, with no answer awaited,
      the client's own stream: TLS as tunnel does, plain HTTP requests as
      plain does (each answer printed), or DATA as raw does.  Prints
      "closed-at-once" when the proxy closes before any byte comes back.

  e2e_client.py raw PORT HOST:PORT DATA
      CONNECT to HOST:PORT with a plain socket, as an ssh or database client
      through HTTPS_PROXY would; after a 200, send DATA (escapes allowed),
      shut the sending side down, and print "stream: " and everything that
      comes back until the far side closes.  "connect-refused" and the
      proxy's answer otherwise.
  e2e_client.py echod LOG
      a TCP echo service on 127.0.0.1 (any port): prints "ready PORT", then
      for each connection writes "banner echod" and a newline at once (as an
      ssh server does), echoes what comes until the client's EOF, and closes.
      Each connection is one "accepted" line in LOG.

  e2e_client.py stall PORT HOST:PORT CAFILE PATH N SECONDS
      open N intercepted tunnels, send GET PATH on each and never read the
      answers; prints "stalled N" once all are sent, holds them SECONDS.
  e2e_client.py churn PORT SECONDS
      connect, send the start of a head and close, over and over, SECONDS.

Output is the raw response bytes (decoded as latin-1), so e2e.sh can grep.
"""
import base64
import os
import socket
import ssl
import struct
import sys


def unescape(s):
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1")


def read_all(sock, idle=1.0):
    sock.settimeout(idle)
    out = b""
    while True:
        try:
            data = sock.recv(65536)
        except (socket.timeout, TimeoutError):
            break
        except (ConnectionResetError, ssl.SSLError):
            break
        if not data:
            break
        out += data
    return out


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = sock.recv(1)
        except (socket.timeout, TimeoutError, ConnectionResetError, ssl.SSLError):
            break
        if not chunk:
            break
        data += chunk
    return data


def read_response(sock):
    """One response: the head, then a Content-Length body, or all until close."""
    sock.settimeout(5)
    head = read_head(sock)
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None or b"\r\nconnection: close" in head.lower():
        return head + read_all(sock)
    body = b""
    while len(body) < length:
        try:
            chunk = sock.recv(length - len(body))
        except (socket.timeout, TimeoutError, ConnectionResetError, ssl.SSLError):
            break
        if not chunk:
            break
        body += chunk
    return head + body


def read_exact(sock, n):
    out = b""
    while len(out) < n:
        data = sock.recv(n - len(out))
        if not data:
            raise ConnectionError("closed")
        out += data
    return out


def ws_frame(payload, opcode=1):
    mask = os.urandom(4)
    head = bytes([0x80 | opcode])
    if len(payload) < 126:
        head += bytes([0x80 | len(payload)])
    else:
        head += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def ws_mode(port, target, cafile, path, after):
    sock = connect(port)
    sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head = read_head(sock)
    if not head.startswith(b"HTTP/1.1 200"):
        sys.stdout.write("connect-refused\n")
        return 0
    host = target.split(":")[0]
    tls = ssl.create_default_context(cafile=cafile).wrap_socket(sock, server_hostname=host)
    key = base64.b64encode(os.urandom(16)).decode()
    tls.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                 "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
                 "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
                 % (path, host, key)).encode())
    head = read_head(tls)
    sys.stdout.write(head.decode("latin-1"))
    if not head.startswith(b"HTTP/1.1 101"):
        sys.stdout.write(read_all(tls).decode("latin-1"))
        return 0
    try:
        tls.sendall(ws_frame(b"hello-ws"))
        h = read_exact(tls, 2)
        n = h[1] & 127
        if n == 126:
            n = struct.unpack(">H", read_exact(tls, 2))[0]
        sys.stdout.write("ws-echo: %s\n" % read_exact(tls, n).decode("latin-1"))
    except (ConnectionError, OSError, ssl.SSLError) as e:
        sys.stdout.write("ws-failed: %s\n" % e)
        return 0
    if after:
        try:
            tls.sendall(unescape(after))
            rest = read_all(tls, idle=3)
            closed = True
            try:
                tls.settimeout(0.5)
                closed = tls.recv(1) == b""
            except (socket.timeout, TimeoutError):
                closed = False
            except (OSError, ssl.SSLError):
                closed = True
            sys.stdout.write("ws-after: %s %s\n" % ("closed" if closed else "open",
                                                    rest.decode("latin-1")))
        except (OSError, ssl.SSLError):
            sys.stdout.write("ws-after: closed\n")
    return 0


def connect(port):
    return socket.create_connection(("127.0.0.1", int(port)), timeout=10)


def raw_mode(port, target, data):
    sock = connect(port)
    sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head = read_head(sock)
    if not head.startswith(b"HTTP/1.1 200"):
        sys.stdout.write("connect-refused\n" + (head + read_all(sock)).decode("latin-1"))
        return 0
    sock.sendall(unescape(data))
    sock.shutdown(socket.SHUT_WR)
    sys.stdout.write("stream: " + read_all(sock, idle=5).decode("latin-1"))
    return 0


def transparent_mode(port, target, kind, args):
    sock = connect(port)
    sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\nOmnibox-Transparent: 1\r\n\r\n"
                  % (target, target)).encode())
    if kind == "tls":
        return tls_requests(sock, args[0], args[1], args[2:])
    if kind == "raw":
        sock.sendall(unescape(args[0]))
        sock.shutdown(socket.SHUT_WR)
        out = read_all(sock, idle=5)
        sys.stdout.write("stream: " + out.decode("latin-1") if out else "closed-at-once\n")
        return 0
    for r in args:
        try:
            sock.sendall(unescape(r))
        except OSError as e:
            sys.stdout.write("send failed: %s\n" % e)
            break
        out = read_response(sock)
        if not out:
            sys.stdout.write("closed-at-once\n")
            break
        sys.stdout.write(out.decode("latin-1") + "\n--- end of answer\n")
    return 0


def tls_requests(sock, cafile, sni, requests):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = False  # SNI may differ on purpose; the name is checked below
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    try:
        tls = ctx.wrap_socket(sock, server_hostname=sni)
    except (ssl.SSLEOFError, ConnectionResetError) as e:
        sys.stdout.write("closed-at-once\nhandshake-refused: %s\n" % e)
        return 0
    except (ssl.SSLError, OSError) as e:
        sys.stdout.write("handshake-refused: %s\n" % e)
        return 0
    cert = tls.getpeercert()
    names = [v for k, v in cert.get("subjectAltName", ()) if k in ("DNS", "IP Address")]
    sys.stdout.write("cert-names: %s\n" % ",".join(names))
    sys.stdout.write("alpn: %s\n" % tls.selected_alpn_protocol())
    for r in requests:
        try:
            tls.sendall(unescape(r))
        except OSError as e:
            sys.stdout.write("send failed: %s\n" % e)
            break
        sys.stdout.write(read_response(tls).decode("latin-1"))
        sys.stdout.write("\n--- end of answer\n")
    if any("Connection: close" in r for r in requests):
        # Pipelined requests: the rest of the answers, until the proxy closes.
        sys.stdout.write(read_all(tls).decode("latin-1"))
    return 0


def echod_mode(log):
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    sys.stdout.write("ready %d\n" % srv.getsockname()[1])
    sys.stdout.flush()

    def serve(c):
        with c:
            c.sendall(b"banner echod\n")
            while True:
                data = c.recv(65536)
                if not data:
                    break
                c.sendall(data)

    while True:
        c, _ = srv.accept()
        with open(log, "a") as f:
            f.write("accepted\n")
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def main():
    mode = sys.argv[1]
    if mode == "raw":
        return raw_mode(sys.argv[2], sys.argv[3], sys.argv[4])
    if mode == "echod":
        return echod_mode(sys.argv[2])
    if mode == "plain":
        sock = connect(sys.argv[2])
        sock.sendall(unescape(sys.argv[3]))
        sys.stdout.write(read_response(sock).decode("latin-1"))
        return 0
    if mode == "halfclose":
        sock = connect(sys.argv[2])
        sock.sendall(unescape(sys.argv[3]))
        sock.shutdown(socket.SHUT_WR)
        sys.stdout.write(read_all(sock, idle=5).decode("latin-1"))
        return 0
    if mode == "stall":
        import time
        port, target, cafile, path, n, secs = sys.argv[2:8]
        host = target.split(":")[0]
        held = []
        for _ in range(int(n)):
            try:
                sock = connect(port)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
                if not read_head(sock).startswith(b"HTTP/1.1 200"):
                    continue
                tls = ssl.create_default_context(cafile=cafile).wrap_socket(sock, server_hostname=host)
                tls.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, host)).encode())
                held.append(tls)
            except OSError:
                pass
        sys.stdout.write("stalled %d\n" % len(held))
        sys.stdout.flush()
        time.sleep(float(secs))
        return 0
    if mode == "churn":
        import time
        end = time.monotonic() + float(sys.argv[3])
        while time.monotonic() < end:
            try:
                sock = connect(sys.argv[2])
                sock.sendall(b"GET http://")
                sock.close()
            except OSError:
                pass
        return 0
    if mode == "trickle":
        import time
        sock = connect(sys.argv[2])
        sock.sendall(b"GET http://api.test/x HTTP/1.1\r\nX-Slow: ")
        start = time.monotonic()
        while time.monotonic() - start < float(sys.argv[3]):
            time.sleep(1)
            try:
                sock.sendall(b"a")
                sock.settimeout(0.01)
                if sock.recv(1) == b"":
                    break
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                break
        else:
            sys.stdout.write("open after %d s\n" % (time.monotonic() - start))
            return 0
        sys.stdout.write("closed after %d s\n" % (time.monotonic() - start))
        return 0
    if mode == "ws":
        return ws_mode(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5],
                       sys.argv[6] if len(sys.argv) > 6 else "")
    if mode == "tunnel":
        port, target, cafile, sni = sys.argv[2:6]
        requests = sys.argv[6:]
        sock = connect(port)
        sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = read_head(sock)
        if not head.startswith(b"HTTP/1.1 200"):
            sys.stdout.write("connect-refused\n" + (head + read_all(sock)).decode("latin-1"))
            return 0
        return tls_requests(sock, cafile, sni, requests)
    if mode == "transparent":
        return transparent_mode(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
