#!/usr/bin/env python3
"""sigv4_server.py - an AWS-like upstream for the e2e tests that checks
Signature Version 4 with the real keys.

    sigv4_server.py --cert FILE --key FILE --keys FILE --log FILE

Written from the SigV4 documentation with Python's hmac and hashlib only,
and on purpose apart from the proxy's own code (runtime/egress/sigv4.c):
a request the proxy signed again passes here only if both read the rules
the same way.

--keys is JSON: {"HOST": {"key_id", "secret", "token" (or null), "region",
"service"}}.  Every request is logged ("request N: METHOD TARGET", then
"sigv4 ok ..." or "sigv4 bad ...: WHY").  A request that passes is
answered 200:

    PUT  /anything   the body is kept (the hash S3 would check is checked),
                     answered with an ETag and X-Stored-Bytes, no body
    GET  /anything   what was put there, else "sigv4-verified" and the
                     request's fields
    GET  /echo-keys  the fields and the real key id, secret and token, as
                     a careless server could echo them

anything else gets 403 with an S3-like error naming the key id it was
signed with, the string to sign and the canonical request.
"""
import argparse
import hashlib
import hmac
import http.server
import json
import re
import socketserver
import ssl
import sys
import threading
import urllib.parse

AUTH_RE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request,"
    r" ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$")
UNSIGNED = ("UNSIGNED-PAYLOAD", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")

lock = threading.Lock()
store = {}
log_file = None
count = 0


def log(line):
    with lock:
        log_file.write(line + "\n")
        log_file.flush()


def hmac256(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def uri_encode(s, slash):
    # Unreserved characters stay, every other byte is %XX (upper case).
    if isinstance(s, str):
        s = s.encode()
    return urllib.parse.quote_from_bytes(s, safe="/~" if slash else "~")


def remove_dot_segments(path):
    out = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if out:
                out.pop()
        else:
            out.append(seg)
    res = "/" + "/".join(out)
    if path.endswith("/") and out:
        res += "/"
    return res


def canonical_uri(service, path):
    if not path:
        return "/"
    if service == "s3":
        # S3: the object key, encoded once; nothing normalised.
        return uri_encode(urllib.parse.unquote_to_bytes(path), True)
    return uri_encode(remove_dot_segments(path), True)


def canonical_query(query):
    if not query:
        return ""
    pairs = []
    for part in query.split("&"):
        k, _, v = part.partition("=")
        pairs.append((uri_encode(urllib.parse.unquote_to_bytes(k), False),
                      uri_encode(urllib.parse.unquote_to_bytes(v), False)))
    return "&".join("%s=%s" % kv for kv in sorted(pairs))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def verify(self, keys, body):
        """None when the signature holds, else why not (and the texts signed)."""
        auth = self.headers.get_all("Authorization") or []
        if len(auth) != 1:
            return "no Authorization", "", ""
        m = AUTH_RE.match(auth[0])
        if not m:
            return "Authorization is not SigV4: " + auth[0][:40], "", ""
        key_id, date, region, service, signed, sig = m.groups()
        self.signed_key_id = key_id
        if key_id != keys["key_id"]:
            return "InvalidAccessKeyId", "", ""
        if region != keys["region"] or service != keys["service"]:
            return "scope", "", ""
        amz_date = self.headers.get("X-Amz-Date", "")
        if not re.match(r"^\d{8}T\d{6}Z$", amz_date) or amz_date[:8] != date:
            return "x-amz-date", "", ""
        names = signed.split(";")
        if names != sorted(set(names)) or "host" not in names or "x-amz-date" not in names:
            return "SignedHeaders lacks host or x-amz-date, or is not sorted", "", ""
        token = self.headers.get_all("X-Amz-Security-Token") or []
        if keys["token"]:
            if token != [keys["token"]] or "x-amz-security-token" not in names:
                return "InvalidToken", "", ""
        elif token:
            return "a token where none is due", "", ""
        payload = self.headers.get("X-Amz-Content-Sha256")
        if service == "s3" and payload is None:
            return "MissingContentSHA256", "", ""
        if payload is None:
            payload = hashlib.sha256(body).hexdigest()
        elif payload not in UNSIGNED and payload != hashlib.sha256(body).hexdigest():
            return "XAmzContentSHA256Mismatch", "", ""
        path, _, query = self.path.partition("?")
        lines = [self.command, canonical_uri(service, path), canonical_query(query)]
        for n in names:
            values = self.headers.get_all(n)
            if values is None:
                return "a signed header is missing: " + n, "", ""
            lines.append(n + ":" + ",".join(" ".join(v.split()) for v in values))
        creq = "\n".join(lines) + "\n\n" + signed + "\n" + payload
        sts = "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s" % (
            amz_date, date, region, service, hashlib.sha256(creq.encode()).hexdigest())
        k = hmac256(("AWS4" + keys["secret"]).encode(), date)
        for part in (region, service, "aws4_request"):
            k = hmac256(k, part)
        want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, sig):
            return "SignatureDoesNotMatch", sts, creq
        return None, sts, creq

    def reply(self, status, text, extra=()):
        data = text.encode()
        self.send_response(status)
        for n, v in extra:
            self.send_header(n, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def handle_any(self):
        global count
        with lock:
            count += 1
            n = count
        log("request %d: %s %s" % (n, self.command, self.path))
        body = self.read_body()
        host = (self.headers.get("Host") or "").split(":")[0]
        keys = self.server.keys.get(host)
        if keys is None:
            self.reply(404, "no such host\n")
            return
        self.signed_key_id = "-"
        why, sts, creq = self.verify(keys, body)
        fields = "".join("%s: %s\n" % kv for kv in self.headers.items())
        if why:
            log("sigv4 bad %s %s: %s" % (self.command, self.path, why))
            self.reply(403, "<Error><Code>%s</Code><AWSAccessKeyId>%s</AWSAccessKeyId>"
                       "<StringToSign>%s</StringToSign><CanonicalRequest>%s</CanonicalRequest>"
                       "</Error>\n" % (why, self.signed_key_id, sts, creq))
            return
        log("sigv4 ok %s %s body-sha256=%s" % (self.command, self.path,
                                                 hashlib.sha256(body).hexdigest()))
        path = self.path.partition("?")[0]
        if self.command == "PUT":
            with lock:
                store[(host, path)] = body
            # As S3 answers: no body (a client parses one as an error).
            self.reply(200, "", [("ETag", '"%s"' % hashlib.md5(body).hexdigest()),
                                 ("X-Stored-Bytes", str(len(body)))])
        elif path == "/echo-keys":
            self.reply(200, "sigv4-verified\n%skey: %s\nsecret: %s\ntoken: %s\n" % (
                fields, keys["key_id"], keys["secret"], keys["token"]))
        elif (host, path) in store and self.command == "GET":
            with lock:
                data = store[(host, path)]
            self.reply(200, data.decode(errors="replace"))
        else:
            self.reply(200, "sigv4-verified %s %s\n%s" % (self.command, self.path, fields))

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    global log_file
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--keys", required=True)
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    log_file = open(a.log, "a")
    srv = Server(("127.0.0.1", 0), Handler)
    srv.keys = json.load(open(a.keys))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
