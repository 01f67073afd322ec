#!/usr/bin/python3
"""Reads deploy/kubernetes/*.yaml, checks what the shards' and the merge
Jobs must hold, and lays out on this machine what a pod would see, so that
the test can run the containers' exact command lines without a cluster.

  k8s_local.py check DIR            prints "OK" or each violation, one a line
  k8s_local.py layout DIR ROOT JOB INDEX
      writes ROOT/<volume>/ for every volume of JOB's pod (ConfigMap data as
      files; Secret volumes from $K8S_SECRET_<KEY> of the test; others empty)
      and prints the container's argv (command + args, $(VAR) expanded,
      mount paths moved under ROOT), NUL-separated, after its environment
      as NAME=VALUE lines (the same NUL separation; first the count).
Values of configMapKeyRef come from $K8S_CM_<KEY> (the per-run ConfigMap is
created by the user, not shipped); fieldRef of the completion index = INDEX.
"""
import glob, os, re, sys
import yaml

def docs(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "*.yaml"))):
        for doc in yaml.safe_load_all(open(p)):
            if doc:
                out.append((os.path.basename(p), doc))
    return out

def find(d, kind, name):
    for _, doc in docs(d):
        if doc.get("kind") == kind and doc.get("metadata", {}).get("name") == name:
            return doc
    return None

SECRET_WORDS = re.compile(r"(?i)(password|passwd|secret|token|bearer|authorization)")

def check(d):
    bad = []
    all_docs = docs(d)
    kinds = {(doc["kind"], doc.get("metadata", {}).get("name")) for _, doc in all_docs}
    shards = find(d, "Job", "yangblast-shards")
    merge = find(d, "Job", "yangblast-merge")
    if not shards or not merge:
        return ["the Jobs yangblast-shards and yangblast-merge are not both there"]
    s = shards["spec"]
    if s.get("completionMode") != "Indexed":
        bad.append("shards: completionMode is %r, not Indexed" % s.get("completionMode"))
    if not isinstance(s.get("parallelism"), int) or s.get("parallelism") != s.get("completions"):
        bad.append("shards: parallelism %r != completions %r" % (s.get("parallelism"), s.get("completions")))
    c = s["template"]["spec"]["containers"][0]
    args = [str(a) for a in c.get("command", []) + c.get("args", [])]
    def after(opt):
        return args[args.index(opt) + 1] if opt in args and args.index(opt) + 1 < len(args) else None
    if after("--shard-from-env") != "JOB_COMPLETION_INDEX":
        bad.append("shards: --shard-from-env is %r, not JOB_COMPLETION_INDEX" % after("--shard-from-env"))
    if after("--shards") != str(s.get("completions")):
        bad.append("shards: --shards %r != completions %r" % (after("--shards"), s.get("completions")))
    env = {e["name"]: e for e in c.get("env", [])}
    sa = after("--start-at") or ""
    m = re.fullmatch(r"\$\((\w+)\)", sa)
    if not m or "configMapKeyRef" not in env.get(m.group(1), {}).get("valueFrom", {}):
        bad.append("shards: --start-at %r is not a variable from a ConfigMap" % sa)
    # Secrets: never in argv; the credentials Secret reaches the pod as a
    # volume or through secretKeyRef, and no argv refers to such a variable.
    secret_vars = set()
    secret_used = False
    for name, job in (("shards", shards), ("merge", merge)):
        pod = job["spec"]["template"]["spec"]
        for v in pod.get("volumes", []):
            if "secret" in v:
                secret_used = True
        for cc in pod.get("containers", []) + pod.get("initContainers", []):
            for e in cc.get("env", []):
                if "secretKeyRef" in e.get("valueFrom", {}):
                    secret_vars.add(e["name"]); secret_used = True
                if "value" in e and SECRET_WORDS.search(e["name"]):
                    bad.append("%s: env %s holds a literal value" % (name, e["name"]))
            argv = [str(a) for a in cc.get("command", []) + cc.get("args", [])]
            for i, a in enumerate(argv):
                for v in secret_vars | {"YANGBLAST_PASSWORD", "YANGBLAST_TOKEN"}:
                    if "$(%s)" % v in a or "$%s" % v in a or "${%s}" % v in a:
                        bad.append("%s: argv %d uses the secret variable %s" % (name, i, v))
                if re.match(r"--(password|token)(=|$)", a) or re.search(r"(?i)://[^/@\s]*:[^/@\s]*@", a):
                    bad.append("%s: argv %d carries a credential: %r" % (name, i, a))
                if SECRET_WORDS.search(a) and not re.fullmatch(r"--(password|token)-file", a):
                    bad.append("%s: argv %d mentions a secret: %r" % (name, i, a))
    if not secret_used:
        bad.append("no Secret reaches the shards (volume or secretKeyRef)")
    if ("Secret", "yangblast-credentials") in kinds:
        bad.append("a Secret with a value is shipped in the manifests")
    for f, doc in all_docs:
        if doc.get("kind") == "ConfigMap":
            for k, v in (doc.get("data") or {}).items():
                if re.search(r"(?im)^\s*password\s*:", v):
                    bad.append("%s: ConfigMap %s key %s holds a password" % (f, doc.get("metadata", {}).get("name"), k))
    return bad or ["OK"]

def expand(s, env):
    return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), s)

def layout(d, root, job_name, index):
    job = find(d, "Job", job_name)
    pod = job["spec"]["template"]["spec"]
    c = pod["containers"][0]
    mounts = {}
    for vm in c.get("volumeMounts", []):
        mounts[vm["mountPath"]] = os.path.join(root, vm["name"])
    for v in pod.get("volumes", []):
        vd = os.path.join(root, v["name"])
        os.makedirs(vd, exist_ok=True)
        if "configMap" in v:
            cm = find(d, "ConfigMap", v["configMap"]["name"])
            for k, val in (cm.get("data") or {}).items():
                p = os.path.join(vd, k)
                if not os.path.exists(p): # the test may have put its own there
                    open(p, "w").write(val)
        elif "secret" in v:
            for k, val in os.environ.items():
                if k.startswith("K8S_SECRET_"):
                    p = os.path.join(vd, k[len("K8S_SECRET_"):].lower())
                    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    os.write(fd, (val + "\n").encode()); os.close(fd)
    env = {"JOB_COMPLETION_INDEX": str(index)} if job["spec"].get("completionMode") == "Indexed" else {}
    for e in c.get("env", []):
        vf = e.get("valueFrom", {})
        if "value" in e:
            env[e["name"]] = expand(str(e["value"]), env)
        elif "configMapKeyRef" in vf:
            env[e["name"]] = os.environ["K8S_CM_" + vf["configMapKeyRef"]["key"]]
        elif "fieldRef" in vf and "job-completion-index" in vf["fieldRef"]["fieldPath"]:
            env[e["name"]] = str(index)
        else:
            sys.exit("env %s: a source this layout does not know" % e["name"])
    def remap(a):
        for mp in sorted(mounts, key=len, reverse=True):
            a = a.replace(mp + "/", mounts[mp] + "/")
            if a == mp:
                a = mounts[mp]
        return a
    argv = [remap(expand(str(a), env)) for a in c.get("command", []) + c.get("args", [])]
    # Files the configuration names by their mount paths (the inventory's
    # password-file and CA) are moved the same way.
    for v in pod.get("volumes", []):
        if "configMap" in v:
            vd = os.path.join(root, v["name"])
            for k in os.listdir(vd):
                p = os.path.join(vd, k)
                text = remap(open(p).read())
                open(p, "w").write(text)
    envl = ["%s=%s" % kv for kv in sorted(env.items())]
    sys.stdout.write("\0".join([str(len(envl))] + envl + argv) + "\0")

if __name__ == "__main__":
    if sys.argv[1] == "check":
        print("\n".join(check(sys.argv[2])))
    else:
        layout(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
