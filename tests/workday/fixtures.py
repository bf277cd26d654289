#!/usr/bin/env python3
"""fixtures.py ROOT - what the workday upstreams serve, made here.

ROOT/files    static files: allowed/hello.txt, allowed/Hello.java's data,
              private/secret.txt (served, but no rule allows it)
ROOT/npm      tinypkg.json (registry metadata) and tinypkg-1.0.0.tgz
ROOT/pypi     simple/index.html, simple/tinywheel/index.html and
              packages/tinywheel-1.0-py3-none-any.whl
"""
import base64
import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile

root = sys.argv[1]


def write(path, data):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


write("files/allowed/hello.txt", "hello-from-the-file-server\n")
write("files/allowed/java.txt", "java-fetched-this\n")
write("files/private/secret.txt", "private-file-content\n")

# npm: a package whose tarball the test made.
tgz = io.BytesIO()
with tarfile.open(fileobj=tgz, mode="w:gz") as t:
    for name, text in (("package/package.json",
                        json.dumps({"name": "tinypkg", "version": "1.0.0", "main": "index.js"})),
                       ("package/index.js", "module.exports = 'tinypkg-loaded';\n")):
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o644
        info.mtime = 1700000000
        t.addfile(info, io.BytesIO(data))
tarball = tgz.getvalue()
write("npm/tinypkg-1.0.0.tgz", tarball)
meta = {
    "name": "tinypkg",
    "dist-tags": {"latest": "1.0.0"},
    "versions": {
        "1.0.0": {
            "name": "tinypkg",
            "version": "1.0.0",
            "main": "index.js",
            "dist": {
                "tarball": "https://registry.test/tinypkg/-/tinypkg-1.0.0.tgz",
                "shasum": hashlib.sha1(tarball).hexdigest(),
                "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode(),
            },
        }
    },
}
write("npm/tinypkg.json", json.dumps(meta))

# PyPI: a wheel the test made, in a simple index.
whl = io.BytesIO()
files = {
    "tinywheel/__init__.py": "VALUE = 'tinywheel-imported'\n",
    "tinywheel-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinywheel\nVersion: 1.0\n",
    "tinywheel-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: workday\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(whl, "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(text)))
    record.append("tinywheel-1.0.dist-info/RECORD,,")
    z.writestr("tinywheel-1.0.dist-info/RECORD", "\n".join(record) + "\n")
wheel = whl.getvalue()
wname = "tinywheel-1.0-py3-none-any.whl"
write("pypi/packages/" + wname, wheel)
write("pypi/simple/index.html",
      '<!DOCTYPE html><html><body><a href="tinywheel/">tinywheel</a></body></html>\n')
write("pypi/simple/tinywheel/index.html",
      '<!DOCTYPE html><html><body><a href="../../packages/%s#sha256=%s">%s</a></body></html>\n'
      % (wname, hashlib.sha256(wheel).hexdigest(), wname))
