#!/usr/bin/env python3
"""sigv4_client.py - the agent's AWS SDK, for the e2e tests: signs a request
with the keys in its environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN: in the sandbox, placeholders) and sends it through the
proxy's tunnel, or straight to the server with --direct.

    sigv4_client.py --ca FILE [--proxy PORT | --direct] HOST:PORT METHOD TARGET
        [--data TEXT] [--payload hash|unsigned|none|wrong|VALUE] [-H 'Name: v']...
        [--region R] [--service S] [--key-id K] [--no-auth] [--no-date]
        [--scope-date YYYYMMDD] [--send-target TARGET]

TARGET is sent as given (already percent-encoded).  Every -H field is
signed with host, x-amz-date, x-amz-content-sha256 and the token.
--send-target sends another target than the one signed (a tampered
request).  Prints "status N", the response's fields and its body.
"""
import argparse
import datetime
import hashlib
import hmac
import http.client
import os
import ssl
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sigv4_server import canonical_query, canonical_uri, hmac256  # noqa: E402


def sign(a, host, body):
    key_id = a.key_id or os.environ.get("AWS_ACCESS_KEY_ID", "")
    secret = os.environ.get("AWS_SECRET_ACCESS_KEY", "")
    token = os.environ.get("AWS_SESSION_TOKEN")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = [("Host", host)]
    if not a.no_date:
        headers.append(("X-Amz-Date", now))
    payload = {"hash": hashlib.sha256(body).hexdigest(), "unsigned": "UNSIGNED-PAYLOAD",
               "wrong": hashlib.sha256(body + b"x").hexdigest(), "none": None}.get(
                   a.payload, a.payload)
    if payload:
        headers.append(("X-Amz-Content-Sha256", payload))
    if token:
        headers.append(("X-Amz-Security-Token", token))
    for h in a.header:
        name, _, value = h.partition(":")
        headers.append((name.strip(), value.strip()))
    if a.no_auth:
        return headers
    names = sorted({n.lower() for n, _ in headers})
    path, _, query = a.target.partition("?")
    lines = [a.method, canonical_uri(a.service, path), canonical_query(query)]
    for n in names:
        lines.append(n + ":" + ",".join(" ".join(v.split()) for k, v in headers if k.lower() == n))
    creq = "\n".join(lines) + "\n\n" + ";".join(names) + "\n" + (
        payload or hashlib.sha256(body).hexdigest())
    date = a.scope_date or now[:8]
    sts = "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s" % (
        now, date, a.region, a.service, hashlib.sha256(creq.encode()).hexdigest())
    k = hmac256(("AWS4" + secret).encode(), date)
    for part in (a.region, a.service, "aws4_request"):
        k = hmac256(k, part)
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    headers.append(("Authorization",
                    "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, "
                    "Signature=%s" % (key_id, date, a.region, a.service, ";".join(names), sig)))
    return headers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ca", required=True)
    ap.add_argument("--proxy", type=int)
    ap.add_argument("--direct", action="store_true")
    ap.add_argument("hostport")
    ap.add_argument("method")
    ap.add_argument("target")
    ap.add_argument("--data", default="")
    ap.add_argument("--payload", default="hash")
    ap.add_argument("-H", "--header", action="append", default=[])
    ap.add_argument("--region", default="eu-west-1")
    ap.add_argument("--service", default="s3")
    ap.add_argument("--key-id")
    ap.add_argument("--no-auth", action="store_true")
    ap.add_argument("--no-date", action="store_true")
    ap.add_argument("--scope-date")
    ap.add_argument("--send-target")
    a = ap.parse_args()
    host, port = a.hostport.rsplit(":", 1)
    body = a.data.encode()
    ctx = ssl.create_default_context(cafile=a.ca)
    if a.direct:
        conn = http.client.HTTPSConnection("127.0.0.1", int(port), context=ctx, timeout=30)
        ctx.check_hostname = False
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", a.proxy, context=ctx, timeout=30)
        conn.set_tunnel(host, int(port))
    headers = sign(a, a.hostport, body)
    conn.putrequest(a.method, a.send_target or a.target, skip_host=True,
                    skip_accept_encoding=True)
    for n, v in headers:
        conn.putheader(n, v)
    if body or a.method in ("PUT", "POST"):
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body if body else None)
    r = conn.getresponse()
    print("status %d" % r.status)
    for n, v in r.getheaders():
        print("%s: %s" % (n, v))
    print()
    sys.stdout.write(r.read().decode(errors="replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
