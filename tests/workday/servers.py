#!/usr/bin/env python3
"""servers.py - the upstreams of tests/linux/workday.sh, HTTPS on ADDR:443.

One process serves every test host, chosen by the Host header:

  files.test, other.test  static files below ROOT/files
  registry.test           an npm registry: GET /NAME is the metadata of
                          ROOT/npm/NAME.json, GET /NAME/-/FILE a tarball
  pypi.test               a PyPI simple index below ROOT/pypi
  git.test                git smart HTTP: `git http-backend` over ROOT/git

Every request is logged to LOG ("HOST METHOD PATH STATUS"); "ready" goes
to standard output once the socket listens.

usage: servers.py ADDR CERT KEY ROOT LOG
"""
import http.server
import os
import socketserver
import ssl
import subprocess
import sys
import threading

ADDR, CERT, KEY, ROOT, LOG = sys.argv[1:6]
log_lock = threading.Lock()


def log(line):
    with log_lock:
        with open(LOG, "a") as f:
            f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "workday-upstream"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, ctype="application/octet-stream", headers=()):
        log("%s %s %s %d" % (self.host(), self.command, self.path, status))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def host(self):
        return (self.headers.get("Host") or "").split(":")[0].lower()

    def file(self, base, rel, ctype="application/octet-stream"):
        path = os.path.normpath(os.path.join(base, rel.lstrip("/")))
        if not path.startswith(base + os.sep) and path != base:
            return self.reply(404, b"not found\n", "text/plain")
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
            ctype = "text/html"
        try:
            with open(path, "rb") as f:
                body = f.read()
        except OSError:
            return self.reply(404, b"not found\n", "text/plain")
        self.reply(200, body, ctype)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def git(self):
        path, _, query = self.path.partition("?")
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": os.path.join(ROOT, "git"),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type") or "",
            "REMOTE_ADDR": "127.0.0.1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        data = self.body()
        env["CONTENT_LENGTH"] = str(len(data))
        p = subprocess.run(["git", "http-backend"], input=data, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        head, _, body = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, body = p.stdout.partition(b"\n\n")
        status, ctype, extra = 200, "application/octet-stream", []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            k, v = k.strip().lower(), v.strip()
            if k == "status":
                status = int(v.split()[0])
            elif k == "content-type":
                ctype = v
            elif k and k not in ("content-length",):
                extra.append((k, v))
        self.reply(status, body, ctype, extra)

    def route(self):
        host = self.host()
        path = self.path.split("?")[0]
        if host in ("files.test", "other.test"):
            return self.file(os.path.join(ROOT, "files"), path)
        if host == "registry.test":
            name = path.strip("/")
            if "/-/" in name:
                return self.file(os.path.join(ROOT, "npm"), name.split("/-/")[1])
            return self.file(os.path.join(ROOT, "npm"), name.replace("/", "%2f") + ".json",
                             "application/json")
        if host == "pypi.test":
            return self.file(os.path.join(ROOT, "pypi"), path)
        if host == "git.test":
            return self.git()
        self.reply(421, b"no such host\n", "text/plain")

    def do_GET(self):
        self.route()

    do_HEAD = do_GET

    def do_POST(self):
        if self.host() == "git.test":
            return self.git()
        self.body()
        self.reply(405, b"no\n", "text/plain")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    srv = Server((ADDR, 443), Handler)
    # The handshake happens in the handler's thread, on its first read.
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
