#!/usr/bin/env python3
"""why_paths.py - the fixture and the paths of tests/linux/why.sh.

  why_paths.py fixture IR_JSON WS HOME OUT_LIST
      build the fixture for one policy (its IR, from omnibox-compile
      --emit=ir) in WS and HOME, and write the paths to ask about, one a
      line, to OUT_LIST
  why_paths.py compare WHY_OUTPUT PROBE_OUTPUT
      print every path where the answer differs from what the launch
      observed, and a summary line; exit 1 when any does

Every directory the fixture makes holds a file why-marker, and every file
holds "why-data": the probe inside a launch reads a path only if it sees
that (a mask shows an empty directory or an empty file).
"""
import json
import os
import sys

DATA = "why-data\n"


def make_file(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(DATA)


def make_dir(path):
    os.makedirs(path, exist_ok=True)
    make_file(os.path.join(path, "why-marker"))


def spell(p, ws, home):
    return p.replace("{CWD}", ws).replace("{HOME}", home)


def policy_paths(ir, ws, home):
    """Grants (directories), files, masks and protected paths of the IR."""
    sb = ir["os_env"]["sandbox"]
    dirs, files = [], []
    for key in ("write_paths", "read_paths"):
        for e in sb.get(key) or []:
            p = e.get("path") if isinstance(e, dict) else None
            if p and "{" not in spell(p, ws, home):
                dirs.append(spell(p, ws, home))
    for key in ("write_files", "mask_paths", "deny_unix_socket_paths"):
        for e in sb.get(key) or []:
            p = e.get("path") if isinstance(e, dict) else None
            if p and "{" not in spell(p, ws, home):
                files.append(spell(p, ws, home))
    for e in sb.get("protected") or []:
        p = spell(e["path"], ws, home)
        if "{" not in p:
            (dirs if e.get("kind") == "directory" else files).append(p)
    return dirs, files


def credential_needs(node, home, env, files):
    """Every env variable and file a credential or git_ssh entry reads."""
    if isinstance(node, dict):
        if node.get("kind") == "env" and node.get("value"):
            env.add(node["value"])
        if node.get("kind") == "file" and node.get("value"):
            files.add(node["value"].replace("~", home, 1).replace("{HOME}", home))
        for key in ("identity_file", "known_hosts_file"):
            v = node.get(key)
            if isinstance(v, dict) and v.get("value"):
                files.add(v["value"].replace("{HOME}", home))
        if node.get("type") == "databricks_cli":
            with open(os.path.join(home, ".databrickscfg"), "w") as f:
                for prof in node.get("profiles") or []:
                    f.write("[%s]\nhost = https://dbc.example.com\ntoken = dapi-why\n" %
                            prof["name"])
        for v in node.values():
            credential_needs(v, home, env, files)
    elif isinstance(node, list):
        for v in node:
            credential_needs(v, home, env, files)


def fixture(ir_json, ws, home, out):
    ir = json.load(open(ir_json))
    # What the launch itself needs: the workspace a cwd names, credentials.
    cwd = (ir["os_env"].get("cwd") or {}).get("path") or ""
    cwd = cwd.replace("{LAUNCH}", ws).replace("{HOME}", home)
    if cwd.startswith(os.path.dirname(ws) + "/"):
        make_dir(cwd)
    env, files = set(), set()
    credential_needs(ir, home, env, files)
    for f in files:
        if f.startswith(home + "/"):
            make_file(f)
            os.chmod(f, 0o600)
    with open(os.path.join(os.path.dirname(ws), "env"), "w") as f:
        for name in sorted(env):
            f.write("%s=why-secret\n" % name)
    base_dirs = ["src", "src/lib", "docs", "build", ".venv", ".venv/bin", ".cache",
                 ".config", "sub", "sub/.secret", "sub/deep", "sub/deep/.hidden",
                 "node_modules", "node_modules/pkg", "secrets", "config", "org/app",
                 "src/gen", "a/b", "p1", "tests", "tests/.fixtures", "scripts", ".github",
                 ".github/workflows", "vendor", "vendor/lib", "out", "tmp", "dist"]
    base_files = ["README", "Makefile", ".env", ".envrc", ".gitignore", ".npmrc",
                  "src/main.c", "src/.local", "src/lib/x.c", "docs/a.md", "build/out",
                  ".venv/bin/python", ".cache/c", ".config/app.toml", "sub/f",
                  "sub/.dot", "sub/.secret/key", "sub/deep/g", "sub/deep/.hidden/h",
                  "node_modules/pkg/index.js", "secrets/s", "config/production.key",
                  "build.log", "tests/t.py", "tests/.fixtures/f.json", "scripts/run.sh",
                  ".github/workflows/ci.yml", "vendor/lib/v.go", ".editorconfig", "out/o",
                  "dist/d", ".dockerignore", "package.json", ".tool-versions"]
    home_dirs = [".ssh", ".aws", ".config", ".config/private", ".config/git", "projects",
                 "projects/p", ".local", ".local/bin", "Library/Logs", ".claude"]
    home_files = [".gitconfig", ".bashrc", ".profile", ".ssh/id_rsa", ".aws/credentials",
                  ".claude.json", "projects/p/f", ".config/private/k", ".netrc",
                  ".local/bin/tool"]
    for d in base_dirs:
        make_dir(os.path.join(ws, d))
    for f in base_files:
        make_file(os.path.join(ws, f))
    for d in home_dirs:
        make_dir(os.path.join(home, d))
    for f in home_files:
        make_file(os.path.join(home, f))
    make_dir(ws)
    make_dir(home)
    pdirs, pfiles = policy_paths(ir, ws, home)
    top = os.path.dirname(ws)
    for d in pdirs:
        if d.startswith(top + "/") and not os.path.exists(d) and "/.git" not in d:
            make_dir(d)
    # Every directory of the fixture holds why-marker (git's own excepted).
    for root in (ws, home):
        for dirpath, dirnames, _ in os.walk(root):
            dirnames[:] = [n for n in dirnames if n != ".git"]
            make_file(os.path.join(dirpath, "why-marker"))
    asks = set()
    for d in base_dirs + base_files:
        asks.add(os.path.join(ws, d))
    for d in home_dirs + home_files:
        asks.add(os.path.join(home, d))
    for p in pdirs + pfiles:
        asks.add(p)
        asks.add(os.path.dirname(p))
        asks.add(os.path.join(p, "why-marker"))
        asks.add(os.path.join(p, "x-new"))
        asks.add(os.path.join(p, ".d-new"))
    for d in base_dirs + ["."]:
        asks.add(os.path.join(ws, d, "new-file"))
        asks.add(os.path.join(ws, d, ".new-dot"))
        asks.add(os.path.join(ws, d, "why-marker"))
    for d in home_dirs + ["."]:
        asks.add(os.path.join(home, d, "new-file"))
        asks.add(os.path.join(home, d, "why-marker"))
    # The private home (no grant holds the home): what tools write there,
    # nested where no directory exists inside yet, and the directories
    # bwrap makes on the way to each grant below the home, with a new
    # entry in each.
    for rel in (".cache", ".cache/x/f", ".npm", ".npm/_logs", ".config/new-app/settings.json",
                ".local/state", ".local/share/new", ".bash_history", "go/pkg/mod",
                ".ssh/new-key"):
        asks.add(os.path.join(home, rel))
    for p in pdirs + pfiles:
        up = os.path.dirname(p)
        while up.startswith(home + "/"):
            asks.add(up)
            asks.add(os.path.join(up, "x-new"))
            up = os.path.dirname(up)
    # The system CA bundle (the session's in its place with egress_rules).
    asks.update(["/etc/ssl/certs", "/etc/ssl/certs/ca-certificates.crt"])
    asks.update([ws, home, os.path.join(ws, "agent.yaml"), os.path.dirname(ws),
                 "/etc/passwd", "/etc/hostname", "/etc/shadow", "/etc/ssl", "/usr/bin/env",
                 "/usr/share/why-new", "/etc/why-new", "/root", "/root/.bashrc", "/home",
                 "/var/log", "/var/tmp", "/srv", "/opt", "/boot", "/mnt", "/dev/null",
                 "/dev/zero", "/proc/cpuinfo", "/proc/sys/kernel/hostname", "/tmp",
                 "/run", os.path.join(ws, ".git"), os.path.join(ws, ".git/config"),
                 os.path.join(ws, ".git/HEAD"), os.path.join(ws, ".git/commondir"),
                 os.path.join(ws, ".git/hooks"), os.path.join(ws, ".git/hooks/pre-commit"),
                 os.path.join(ws, ".git/objects/info/alternates"),
                 os.path.join(ws, ".git/modules"), os.path.join(ws, ".gitmodules"),
                 os.path.join(ws, ".vscode"), os.path.join(ws, ".mcp.json")])
    # As the kernel spells them; nothing under the launch's private /tmp.
    asks = sorted(set(os.path.realpath(a) for a in asks if a and "{" not in a))
    asks = [a for a in asks if not a.startswith("/tmp/")]
    with open(out, "w") as f:
        for a in asks:
            f.write(a + "\n")


def parse_why(path):
    """omnibox-compile --resolve --query-file output: {(access, path): (allowed, why)}."""
    got, access, asked = {}, None, None
    for line in open(path, errors="replace"):
        if line.startswith("# query: "):
            access, asked = line.split()[2], line.rstrip("\n").split(" ", 3)[3]
            continue
        if line.startswith("  linux    ") and access:
            rest = line[len("  linux    "):].rstrip("\n")
            verdict, rest = rest[:6].strip(), rest[6:]
            p, _, why = rest.partition(": ")
            if not p.startswith("/"):  # an answer from the IR names no path
                p, why = asked, rest
            got[(access, p)] = (verdict == "allow", why)
    return got


# What the sandbox has of its own, where reading is not reading the host's.
OWN = ("/dev", "/proc", "/tmp")


def host_id(p):
    try:
        st = os.stat(p)
    except OSError:
        return None
    return "%d:%d" % (st.st_dev, st.st_ino)


def compare(why_out, probe_out):
    why = parse_why(why_out)
    bad, n = [], 0
    for line in open(probe_out, errors="replace"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 4:
            continue
        p, r, w, inside = parts[0], parts[1] == "1", parts[2] == "1", parts[3]
        own = any(p == o or p.startswith(o + "/") for o in OWN)
        reason = why.get(("read", p), (False, ""))[1]
        copy = "a private copy" in reason or "holding a copy" in reason
        # Read: the host's own object (or a copy the launch says it made).
        r = r and (own or copy or (inside != "" and inside == host_id(p)))
        for access, seen in (("read", r), ("write", w)):
            key = (access, p)
            if key not in why:
                bad.append("%s %s: no answer" % (access, p))
                continue
            n += 1
            if why[key][0] != seen:
                bad.append("%s %s: --why says %s (%s), the launch %s" %
                           (access, p, "allowed" if why[key][0] else "refused", why[key][1],
                            "could" if seen else "could not"))
    for b in bad:
        print("  " + b)
    print("compared %d answers, %d disagree" % (n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "fixture":
        fixture(*sys.argv[2:6])
    elif sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
