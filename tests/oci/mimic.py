#!/usr/bin/env python3
"""mimic.py COMPILE POLICY CWD HOME -- CMD...: a stand-in for
`omnibox-compile --target=oci --resolve`, for working on tests/linux/oci.sh
with a compiler that has no OCI target (OMNIBOX_OCI_MIMIC=1).

It reads the Linux launch (`--target=linux --resolve`: the dotfile scan
done, paths canonical) and writes what the OCI target means by it as a
runtime-spec config.json on standard output: the grants, masks and
protected paths as mounts over a read-only "rootfs", /tmp and the home as
tmpfs, the network namespace unless the policy allows the network, no
capabilities, noNewPrivileges, the rlimits, the environment allow-list and
linux.seccomp from `--emit=seccomp-oci`.  Run by a non-root user it writes
the rootless form: a user namespace mapping 0 to the caller, no cgroups.
"""
import json
import os
import subprocess
import sys


def resolve(compile_, policy, cwd, home, cmd):
    out = subprocess.run(
        [compile_, "--target=linux", "--resolve", "--cwd", cwd, "--home", home, policy, "--"] + cmd,
        check=True, capture_output=True, text=True).stdout
    return out.split("\n")


def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    compile_, policy, cwd, home = argv[:sep]
    cmd = argv[sep + 1:]
    lines = resolve(compile_, policy, cwd, home, cmd)
    rootless = os.geteuid() != 0

    mounts = [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]
         + ([] if rootless else ["gid=5"])},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
         "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "nodev", "mode=1777"]},
    ]
    namespaces = [{"type": t} for t in ("pid", "ipc", "uts", "mount", "cgroup")]
    rlimits = []
    resources = {}
    env_names = []
    section = ""
    comment = ""
    i = 0
    # The bwrap part ends at its "--"; omnibox-init's at the second one.
    dashes = 0

    def bind(src, dst, ro):
        opts = ["rbind", "nosuid", "nodev"] + (["ro"] if ro else [])
        mounts.append({"destination": dst, "type": "bind", "source": src, "options": opts})

    def tmpfs(dst, ro, mode="755"):
        mounts.append({"destination": dst, "type": "tmpfs", "source": "tmpfs",
                       "options": ["nosuid", "nodev", "mode=" + mode] + (["ro"] if ro else [])})

    while i < len(lines):
        a = lines[i]
        if a.startswith("# environment (values not shown):"):
            env_names = a.split(":", 1)[1].split()
        if a.startswith("# "):
            if a[2:3].isdigit():
                section = a[2:4].strip(". ")
            comment = a
            i += 1
            continue
        if a == "--":
            dashes += 1
            i += 1
            continue
        if dashes >= 1:
            if a.startswith("--rlimit-"):
                kind = a[len("--rlimit-"):].upper()
                n = int(lines[i + 1])
                if kind == "NPROC" and not rootless:
                    # root is exempt from RLIMIT_NPROC: a cgroup's pids.max instead.
                    resources["pids"] = {"limit": n}
                else:
                    rlimits.append({"type": "RLIMIT_" + kind, "hard": n, "soft": n})
                i += 2
                continue
            i += 1
            continue
        if a == "--unshare-net":
            namespaces.append({"type": "network"})
        elif a in ("--bind-fd", "--ro-bind-fd"):
            dst = lines[i + 2]
            i += 3
            if section == "2b":
                tmpfs(dst, False, "700")
            elif section in ("4", "6b"):
                if "scratch dir" in comment or "missing" in comment:
                    continue
                bind(dst, dst, a == "--ro-bind-fd")
            continue
        elif a in ("--bind", "--ro-bind") and section in ("4", "5", "6b"):
            if "missing" not in comment:
                bind(lines[i + 1], lines[i + 2], a == "--ro-bind")
            i += 3
            continue
        elif a == "--tmpfs" and section == "5":
            if "the private home" not in comment and "missing" not in comment:
                tmpfs(lines[i + 1], True)
            i += 2
            continue
        i += 1
    # The scratch dir of the Linux launch is /tmp itself here.
    env = []
    for n in env_names:
        if n in ("TMPDIR", "TMP", "TEMP", "TEMPDIR"):
            env.append(n + "=/tmp")
        elif n == "HOME":
            env.append("HOME=" + home)
        elif n == "PWD":
            env.append("PWD=" + cwd)
        elif n in os.environ:
            env.append(n + "=" + os.environ[n])
    seccomp = json.loads(subprocess.run(
        [compile_, "--target=linux", "--emit=seccomp-oci", policy],
        check=True, capture_output=True, text=True).stdout)
    linux = {
        "namespaces": namespaces,
        "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                        "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                        "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
        "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                          "/proc/sysrq-trigger"],
        "seccomp": seccomp,
    }
    if resources:
        linux["resources"] = resources
    if rootless:
        linux["namespaces"].append({"type": "user"})
        linux["uidMappings"] = [{"containerID": 0, "hostID": os.getuid(), "size": 1}]
        linux["gidMappings"] = [{"containerID": 0, "hostID": os.getgid(), "size": 1}]
    config = {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": cmd,
            "env": env,
            "cwd": os.path.realpath(cwd),
            "capabilities": {"bounding": [], "effective": [], "permitted": [],
                             "inheritable": [], "ambient": []},
            "rlimits": rlimits,
            "noNewPrivileges": True,
        },
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "omnibox",
        "mounts": mounts,
        "linux": linux,
    }
    json.dump(config, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
