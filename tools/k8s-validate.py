#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""k8s-validate.py - check Kubernetes manifests offline (no cluster runs here).

1. Schema: every object is decoded against the API's own models, as
   Debian's python3-kubernetes generates them from the OpenAPI spec: every
   field must be one the model knows, of its type, and the fields the API
   requires must be there.
2. What egret's deployment relies on (docs/DEPLOYMENT.md, "Kubernetes"):
   egretd's DaemonSet in the host's PID namespace with the host's cgroup2
   and bpffs; the miner keeping the restricted Pod Security rules.

Usage: k8s-validate.py FILE...  (one line per problem; exit 1 if any)
"""
import sys

import yaml
from kubernetes import client

MODELS = {
    ("v1", "Namespace"): "V1Namespace",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("apps/v1", "DaemonSet"): "V1DaemonSet",
    ("apps/v1", "Deployment"): "V1Deployment",
}
SCALARS = {
    "str": (str,), "int": (int,), "bool": (bool,), "float": (int, float),
    "datetime": (str,), "date": (str,), "object": (object,),
}


def check(value, typ, path, errs):
    """Walk @value as the model type @typ says."""
    if value is None:
        return
    if typ.startswith("list["):
        if not isinstance(value, list):
            errs.append(f"{path}: want a list")
            return
        for i, v in enumerate(value):
            check(v, typ[5:-1], f"{path}[{i}]", errs)
    elif typ.startswith("dict("):
        if not isinstance(value, dict):
            errs.append(f"{path}: want a mapping")
            return
        inner = typ[typ.index(",") + 1:-1].strip()
        for k, v in value.items():
            check(v, inner, f"{path}.{k}", errs)
    elif typ in SCALARS:
        ok = isinstance(value, SCALARS[typ]) and not (typ == "int" and isinstance(value, bool))
        if not ok:
            errs.append(f"{path}: want {typ}, got {type(value).__name__}")
    else:
        model = getattr(client, typ, None)
        if model is None:
            errs.append(f"{path}: no model {typ}")
            return
        if not isinstance(value, dict):
            errs.append(f"{path}: want a {typ} mapping")
            return
        names = {v: k for k, v in model.attribute_map.items()}
        for k, v in value.items():
            if k not in names:
                errs.append(f"{path}: unknown field '{k}' in {typ}")
            else:
                check(v, model.openapi_types[names[k]], f"{path}.{k}", errs)


def required(obj, typ, path, errs):
    """The API's required fields, as the models' constructors check them."""
    try:
        client.ApiClient()._ApiClient__deserialize(obj, typ)
    except (ValueError, TypeError) as e:
        errs.append(f"{path}: {e}")


def pod_rules(kind, name, spec, errs):
    """What the deployment relies on, per kind."""
    where = f"{kind} {name}"
    pod = spec["template"]["spec"]
    ctrs = pod.get("containers", [])
    if name == "egretd":
        if not pod.get("hostPID"):
            errs.append(f"{where}: egretd needs hostPID (SO_PEERCRED names callers by host pid)")
        paths = {v.get("hostPath", {}).get("path") for v in pod.get("volumes", [])}
        for p in ("/sys/fs/cgroup", "/sys/fs/bpf", "/run/egretd"):
            if p not in paths:
                errs.append(f"{where}: no hostPath volume {p}")
        for c in ctrs:
            sc = c.get("securityContext", {})
            if sc.get("privileged"):
                errs.append(f"{where}: container {c['name']} is privileged; name its capabilities instead")
            if "ALL" not in sc.get("capabilities", {}).get("drop", []):
                errs.append(f"{where}: container {c['name']} must drop ALL before adding")
    else:
        psc = pod.get("securityContext", {})
        if psc.get("runAsNonRoot") is not True:
            errs.append(f"{where}: runAsNonRoot must be true")
        if psc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
            errs.append(f"{where}: seccompProfile must be RuntimeDefault")
        for c in ctrs:
            sc = c.get("securityContext", {})
            if sc.get("allowPrivilegeEscalation") is not False:
                errs.append(f"{where}: container {c['name']}: allowPrivilegeEscalation must be false")
            caps = sc.get("capabilities", {})
            if caps.get("drop") != ["ALL"] or caps.get("add"):
                errs.append(f"{where}: container {c['name']}: capabilities must be drop [ALL], add none")


def main(files):
    errs, n = [], 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            docs = [d for d in yaml.safe_load_all(fh) if d is not None]
        for i, d in enumerate(docs):
            n += 1
            key = (d.get("apiVersion"), d.get("kind"))
            path = f"{f}[{i}] {key[1]} {d.get('metadata', {}).get('name', '?')}"
            if key not in MODELS:
                errs.append(f"{path}: no model for {key}")
                continue
            check(d, MODELS[key], path, errs)
            required(d, MODELS[key], path, errs)
            if key[1] in ("DaemonSet", "Deployment"):
                pod_rules(key[1], d["metadata"]["name"], d["spec"], errs)
    for e in errs:
        print(e)
    if not errs:
        print(f"ok    k8s-validate: {n} objects in {len(files)} files")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
