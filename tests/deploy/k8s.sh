#!/bin/bash
# tests/deploy/k8s.sh - the Kubernetes manifests, validated offline
# (tools/k8s-validate.py: the API's models from python3-kubernetes, and the
# rules the deployment relies on), and the validator shown to refuse
# broken copies of them. No cluster can run here; the DaemonSet's
# container settings are run for real by tests/deploy/docker.sh.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K=$ROOT/tools/deploy/kubernetes
V=(/usr/bin/python3 "$ROOT/tools/k8s-validate.py")
W=$(mktemp -d /tmp/egret-k8s.XXXXXX)
trap 'rm -rf "$W"' EXIT
failed=0

if ! /usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null; then
	if [ "${CI:-}" = true ]; then
		echo "FAIL  k8s.sh: no python3-kubernetes (CI=true: tools/install-deps.sh deploy installs it)"
		exit 1
	fi
	echo "SKIP: tests/deploy/k8s.sh needs python3-kubernetes (sudo tools/install-deps.sh deploy)"
	exit 0
fi
if out=$("${V[@]}" "$K"/*.yaml 2>&1); then
	echo "$out"
else
	echo "FAIL  the manifests: $out"
	failed=1
fi

# broken NAME FILE SED-EXPR WANT: a copy of FILE changed by SED-EXPR must be
# refused, saying WANT.
broken() {
	sed "$3" "$K/$2" >"$W/$1.yaml"
	if out=$("${V[@]}" "$W/$1.yaml" 2>&1); then
		echo "FAIL  the validator took $1"; failed=1
	elif [[ "$out" != *"$4"* ]]; then
		echo "FAIL  $1: want '$4' in: $out"; failed=1
	else
		echo "ok    the validator refuses $1"
	fi
}
broken unknown-field egretd-daemonset.yaml 's/^      hostPID: true/      hostPid: true/' "unknown field 'hostPid'"
broken wrong-type egretd-daemonset.yaml 's/terminationGracePeriodSeconds: 30/terminationGracePeriodSeconds: soon/' "want int"
broken no-host-pid egretd-daemonset.yaml 's/^      hostPID: true/      hostPID: false/' "needs hostPID"
broken no-containers miner-deployment.yaml 's/^      containers:/      initContainers:/' "containers"
broken escalation miner-deployment.yaml 's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' "allowPrivilegeEscalation must be false"
broken root-miner miner-deployment.yaml 's/runAsNonRoot: true/runAsNonRoot: false/' "runAsNonRoot must be true"
broken unconfined-miner miner-deployment.yaml 's/seccompProfile: {type: RuntimeDefault}/seccompProfile: {type: Unconfined}/' "RuntimeDefault"
exit $failed
