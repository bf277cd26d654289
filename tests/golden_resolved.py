#!/usr/bin/env python3
"""golden_resolved.py - the resolved goldens: what a launch passes to bwrap.

  golden_resolved.py COMPILER GOLDEN_DIR OUT_DIR [NAME...]

For every valid golden policy GOLDEN_DIR/NAME/agent.yaml (all of them, or
the NAMEs given), build a fixture workspace and home in a new temporary
directory, run

  omnibox-compile --resolve --target=linux [ARGS] agent.yaml -- agent

there (ARGS from NAME/args; with --terminal, the terminal's own command),
which prints the argv omnibox-run --dry-run shows and a launch passes to
bwrap, and write it, normalized, to OUT_DIR/NAME/expect.resolved, or the
refusal and exit status, normalized, to OUT_DIR/NAME/expect.resolved.err.
A policy in SKIPPED (below) gets OUT_DIR/NAME/skip with the reason
instead.  tests/golden.sh compares them with golden/NAME/ (`make
golden-check`) or copies them there (`make golden`).

The fixture is the same on every machine and every run: fixed names, fixed
contents, fixed modes, nothing taken from the clock or the host.  Its root
(FIXTURE) holds

  work/     where the launch starts: the workspace unless os_env.cwd names
            another; top-level and nested dotfiles (.env, .venv/, .cache/,
            sub/.secret/...), a git repository and a nested one in sub/nested
  home/     the home directory, with its dotfiles (.ssh/, .gitconfig, .bashrc)
  bin/      the agent's command (and each terminal's), the only PATH entry
  tmp/      TMPDIR (the scratch dir is only named by --resolve, never made)
  root/     the host paths the policy names (see below)
  policy/   the policy: agent.yaml with every absolute path below /home,
            /mnt, /opt, /run, /srv, /tmp or /var moved below FIXTURE/root
            (/srv/work becomes FIXTURE/root/srv/work), so that what the
            policy names on the host is made by the fixture, not taken from
            the machine; the system directories stay the host's

What the policy names is made present: every grant a directory, every
write_files entry a file, every protect_paths entry as its kind, every
deny_unix_socket_paths entry a socket, every credential file and socket.
mask_paths alternate, in the IR's order: the first is made, the second
left missing, and so on, so that both kinds of mask are shown.  The
launch's environment is fixed: PATH, HOME, TMPDIR, and each variable a
credential reads, with a fixed value.

Normalized, so that the files are byte-identical on every machine:

  {FIXTURE}     the fixture's root (canonical, and as made)
  {SCRATCH}     the scratch dir, FIXTURE/tmp/omnibox-XXXXXX
  {FD}          the number of a descriptor a launch opens on a mount source
                (after --bind-fd and --ro-bind-fd, bwrap's or omnibox-init's)
                or for a Landlock rule (--ll-fs)
  {INIT}        linux_landlock's omnibox-init (found next to the compiler, or not)
  {LANDLOCK_FIXED_RULES}  linux_landlock's rules for the system paths this host
                has (system directories, /etc files, devices, /proc)
  {BUILD}       the directory of omnibox-compile (and of omnibox-init)
  {SYSTEM_DIR}  in section 1, a system directory /DIR (/usr, /bin, /lib...):
                --ro-bind-try /DIR /DIR, or --symlink usr/DIR /DIR where the
                host merged it into /usr; written {SYSTEM_DIR} /DIR /DIR
  {CA_BUNDLES}  with egress_rules, the session's CA bundle bound over each
                system bundle the host has (--ro-bind {SCRATCH}/omnibox-ca.pem
                PATH, as many as there are, or none): one line
"""
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile

DATA = "golden fixture\n"

# The host's directories whose paths the fixture makes below ROOT/root.  The
# system directories stay the host's (the sandbox binds them read-only
# itself), and so does what is not a local path (a git_ssh repository).
REROOTED = ("/home", "/mnt", "/opt", "/run", "/srv", "/tmp", "/var")

# An absolute path in a YAML scalar: after a space, a bracket, a quote or a
# comma, and not already below the fixture.
ABSOLUTE = re.compile(r"""(?<=[\s\[{,'"])(/[A-Za-z0-9_.${}-][^\s\]},'"]*)""")


def reroot(match, root):
    path = match.group(1)
    top = "/" + path.split("/")[1]
    if top not in REROOTED or path.startswith(root + "/"):
        return path
    return root + "/root" + path


def reroot_policy(src, root, out):
    with open(src) as f:
        text = f.read()
    lines = []
    for line in text.split("\n"):
        # Comments stay as written; a key such as `cwd: /srv/work` does not.
        body, hash_, comment = line.partition(" #")
        body = ABSOLUTE.sub(lambda m: reroot(m, root), body)
        lines.append(body + hash_ + comment)
    with open(out, "w") as f:
        f.write("\n".join(lines))


def inside(root, path):
    return path == root or path.startswith(root + "/")


def make_file(root, path, data=DATA, mode=0o644):
    if not inside(root, path):
        raise SystemExit("golden_fixture: %s is outside the fixture %s" % (path, root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.lexists(path):
        with open(path, "w") as f:
            f.write(data)
        os.chmod(path, mode)


def make_dir(root, path):
    if not inside(root, path):
        raise SystemExit("golden_fixture: %s is outside the fixture %s" % (path, root))
    if not os.path.lexists(path):
        os.makedirs(path)


def make_socket(root, path):
    if not inside(root, path):
        raise SystemExit("golden_fixture: %s is outside the fixture %s" % (path, root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.lexists(path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.close()


def git_repo(root, path):
    """A repository as `git init` makes it, with a fixed configuration."""
    make_dir(root, path)
    empty = os.path.join(root, "git-template")
    os.makedirs(empty, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(root, "home"),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run(["git", "init", "-q", "--template=" + empty, path], env=env, check=True)
    gitdir = os.path.join(path, ".git")
    with open(os.path.join(gitdir, "config"), "w") as f:
        f.write("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
                "\tbare = false\n\tlogallrefupdates = true\n")
    with open(os.path.join(gitdir, "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
    for d in ("hooks", "info", "objects/info", "refs/heads", "refs/tags"):
        make_dir(root, os.path.join(gitdir, d))
    make_file(root, os.path.join(gitdir, "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
    make_file(root, os.path.join(gitdir, "info", "exclude"), "")


WORK_DIRS = ["src", "src/lib", "docs", ".venv", ".venv/bin", ".cache", ".vscode", "sub",
             "sub/.secret", "sub/deep", "sub/deep/.hidden", "config"]
WORK_FILES = ["README", "Makefile", ".env", ".gitignore", "src/main.c", "src/.local",
              "docs/a.md", ".venv/bin/python", ".cache/c", ".vscode/settings.json", "sub/f",
              "sub/.dot", "sub/.secret/key", "sub/deep/g", "sub/deep/.hidden/h"]
HOME_DIRS = [".ssh", ".config", ".config/git", ".local", ".local/bin"]
HOME_FILES = [".gitconfig", ".bashrc", ".profile", ".ssh/id_ed25519", ".ssh/known_hosts",
              ".config/git/config"]


def spell(path, root, ws, home):
    return (path.replace("{LAUNCH}", os.path.join(root, "work"))
            .replace("{CWD}", ws).replace("{HOME}", home))


def credentials(node, home, env, files):
    """Every variable, file and socket a credential or git_ssh entry reads."""
    if isinstance(node, dict):
        src = node.get("kind")
        if src in ("env", "file", "unix_socket") and isinstance(node.get("value"), str):
            v = node["value"]
            if src == "env":
                env.add(v)
            else:
                v = re.sub(r"^(~|\{HOME\})(?=/)", home, v)
                files.append((src, v))
        for key in ("identity_file", "known_hosts_file"):
            v = node.get(key)
            if isinstance(v, dict) and isinstance(v.get("value"), str):
                files.append(("file", v["value"].replace("{HOME}", home)))
        for v in node.values():
            credentials(v, home, env, files)
    elif isinstance(node, list):
        for v in node:
            credentials(v, home, env, files)


def build(ir, root):
    work = os.path.join(root, "work")
    home = os.path.join(root, "home")
    ws = spell((ir["os_env"].get("cwd") or {}).get("path") or "{LAUNCH}", root, work, home)
    sb = ir["os_env"].get("sandbox") or {}

    for d in ("bin", "tmp", "root"):
        make_dir(root, os.path.join(root, d))
    # Not a script: the launch reads a #! line to bind the interpreter.
    names = {"agent"}
    for t in ir.get("terminals") or []:
        c = t.get("command")
        if isinstance(c, dict) and isinstance(c.get("value"), str):
            names.add(c["value"])
    for n in sorted(names):
        if "/" not in n:
            make_file(root, os.path.join(root, "bin", n), "golden fixture command\n", 0o755)

    for base in sorted({work, ws}):
        make_dir(root, base)
        for d in WORK_DIRS:
            make_dir(root, os.path.join(base, d))
        for f in WORK_FILES:
            make_file(root, os.path.join(base, f))
        git_repo(root, base)
        git_repo(root, os.path.join(base, "sub", "nested"))
        make_file(root, os.path.join(base, "sub", "nested", ".env"))
    make_dir(root, home)
    for d in HOME_DIRS:
        make_dir(root, os.path.join(home, d))
    for f in HOME_FILES:
        make_file(root, os.path.join(home, f))
    os.chmod(os.path.join(home, ".ssh"), 0o700)
    os.chmod(os.path.join(home, ".ssh", "id_ed25519"), 0o600)

    def paths(key):
        for e in sb.get(key) or []:
            p = e.get("path") if isinstance(e, dict) else None
            if isinstance(p, str):
                yield e, spell(p, root, ws, home)

    for key in ("write_paths", "read_paths"):
        for _, p in paths(key):
            if inside(root, p):
                make_dir(root, p)
    for _, p in paths("write_files"):
        if inside(root, p):
            make_file(root, p)
    for i, (e, p) in enumerate(paths("mask_paths")):
        if inside(root, p) and i % 2 == 0:
            if (e.get("written") or "").endswith("/"):
                make_dir(root, p)
            else:
                make_file(root, p)
    for e, p in paths("protected"):
        # The defaults are left as the workspace has them; what the policy
        # itself names is made.
        if e.get("line") is not None and inside(root, p):
            if e.get("kind") == "directory":
                make_dir(root, p)
            else:
                make_file(root, p)
    for _, p in paths("deny_unix_socket_paths"):
        if inside(root, p):
            make_socket(root, p)

    env, files = set(), []
    credentials(sb, home, env, files)
    for t in ir.get("terminals") or []:
        credentials(t, home, env, files)
    for kind, p in files:
        if inside(root, p):
            if kind == "unix_socket":
                make_socket(root, p)
            else:
                make_file(root, p, "golden-secret\n", 0o600)
    return {name: "golden-secret" for name in env}


def normalize(text, subst):
    """TEXT with the machine's and the run's own parts replaced (see above)."""
    out, prev, system, fixed_rule = [], None, False, 0
    for line in text.split("\n"):
        for old, new in subst:
            line = line.replace(old, new)
        if line.startswith("# 1. "):
            system = True
        elif line.startswith("# "):
            system = False
        if prev in ("--bind-fd", "--ro-bind-fd", "--ll-fs") and line.isdigit():
            line = "{FD}"
        # A bind omnibox-init makes, written as bwrap's: its descriptor too.
        line = re.sub(r"^(# omnibox-init: --(?:ro-)?bind-fd) \d+ ", r"\1 {FD} ", line)
        # linux_landlock's first argument: omnibox-init where this build has
        # it, or "{INIT}" before it is built.
        if prev is not None and prev.startswith("# omnibox-init, started directly"):
            line = "{INIT}"
        # linux_landlock: the fixed rules are those of the system paths this
        # host has: one line stands for them all.
        if fixed_rule and prev is not None:
            fixed_rule -= 1
            prev = line
            continue
        if re.match(r"# /\S*: .*\((system directory|system file of /etc|device|the host's /proc)", line):
            fixed_rule = 3
            if not out or out[-1] != "{LANDLOCK_FIXED_RULES}":
                out.append("{LANDLOCK_FIXED_RULES}")
            prev = line
            continue
        out.append(line)
        prev = line
        # Section 1: a system directory is bound, or a link where the host
        # merged it into /usr.
        if (system and len(out) >= 3 and out[-3] in ("--ro-bind-try", "--symlink")
                and re.fullmatch(r"/[^/]+", line)):
            out[-3], out[-2] = "{SYSTEM_DIR}", line
        # The system CA bundles this host has, whichever they are (if any).
        if line.startswith("# egress_rules") and "the session's CA bundle" in line:
            out.append("{CA_BUNDLES}")
        elif len(out) >= 3 and out[-3] == "--ro-bind" and out[-2] == "{SCRATCH}/omnibox-ca.pem":
            del out[-3:]
    return "\n".join(out)


def resolve(compiler, policy_dir, out_dir):
    """Write OUT_DIR/expect.resolved or OUT_DIR/expect.resolved.err."""
    made = tempfile.mkdtemp(prefix="omnibox-golden.")
    root = os.path.realpath(made)
    try:
        args = []
        if os.path.exists(os.path.join(policy_dir, "args")):
            with open(os.path.join(policy_dir, "args")) as f:
                args = shlex.split(f.read())
        os.makedirs(os.path.join(root, "policy"))
        os.makedirs(os.path.join(root, "work"))
        policy = os.path.join(root, "policy", "agent.yaml")
        reroot_policy(os.path.join(policy_dir, "agent.yaml"), root, policy)
        ir = subprocess.run([compiler, "-q"] + args + ["--emit=ir", policy],
                            capture_output=True, check=True).stdout
        env = build(json.loads(ir), root)
        shutil.rmtree(os.path.join(root, "git-template"))
        env.update({"PATH": os.path.join(root, "bin"), "HOME": os.path.join(root, "home"),
                    "TMPDIR": os.path.join(root, "tmp")})
        command = [] if any(a.startswith("--terminal") for a in args) else ["--", "agent"]
        r = subprocess.run([compiler, "-q"] + args + ["--resolve", "--target=linux",
                            "--home=" + env["HOME"], policy] + command,
                           cwd=os.path.join(root, "work"), env=env, capture_output=True)
        subst = [(root + "/tmp/omnibox-XXXXXX", "{SCRATCH}"),
                 (made + "/tmp/omnibox-XXXXXX", "{SCRATCH}"),
                 (root, "{FIXTURE}"), (made, "{FIXTURE}"),
                 (os.path.dirname(compiler), "{BUILD}")]
        os.makedirs(out_dir, exist_ok=True)
        name, text = ("expect.resolved", r.stdout) if r.returncode == 0 else \
            ("expect.resolved.err", r.stderr + b"exit %d\n" % r.returncode)
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(normalize(text.decode("utf-8", "backslashreplace"), subst))
    finally:
        shutil.rmtree(made)


# Policies whose resolved launch is the host's, whatever the fixture: a
# golden of it would differ from one machine to the next.
SKIPPED = {
    "032-broad-grants": "read_paths: / grants every top-level entry of the host's root "
                        "(and masks their dotfiles): its launch lists the machine's own /",
}


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    compiler = os.path.realpath(argv[1])
    golden = argv[2]
    names = argv[4:] or sorted(os.listdir(golden))
    failed = 0
    for name in names:
        policy_dir = os.path.join(golden, name)
        # eNNN policies are invalid: they have no launch.
        if name.startswith("e") or not os.path.isfile(os.path.join(policy_dir, "agent.yaml")):
            continue
        if name in SKIPPED:
            os.makedirs(os.path.join(argv[3], name), exist_ok=True)
            with open(os.path.join(argv[3], name, "skip"), "w") as f:
                f.write(SKIPPED[name] + "\n")
            continue
        try:
            resolve(compiler, policy_dir, os.path.join(argv[3], name))
        except (OSError, subprocess.CalledProcessError) as e:
            sys.stderr.write("golden_resolved: %s: %s\n" % (name, e))
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
