#!/usr/bin/env python3
"""deployment_command.py KUBERNETES_YAML TABLE_OUT ROOT: the egress proxy's
command as the emitted Deployment runs it, one argument a line, with its
mounts' paths under ROOT (PROXY_DIR/x -> ROOT/x) and its ConfigMap's table
written to TABLE_OUT (which the --table argument then names)."""
import sys

import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
table_out, root = sys.argv[2], sys.argv[3]
deploy = next(d for d in docs if d["kind"] == "Deployment")
cmap = next(d for d in docs if d["kind"] == "ConfigMap")
spec = deploy["spec"]["template"]["spec"]
container = spec["containers"][0]
mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
volumes = {v["name"]: v for v in spec["volumes"]}
# The table's mount is the ConfigMap of the same document set.
assert volumes["table"]["configMap"]["name"] == cmap["metadata"]["name"]
open(table_out, "w").write(cmap["data"]["egress.table"])
for arg in container["command"][1:]:
    if arg == mounts["table"] + "/egress.table":
        arg = table_out
    elif arg.startswith("/etc/omnibox/"):
        arg = root + "/" + arg[len("/etc/omnibox/"):]
    elif arg.startswith("0.0.0.0:"):
        arg = "127.0.0.1:0"
    print(arg)
