#!/usr/bin/env bash
# Builds Helm from its Go module (helm.sh/helm/v3/cmd/helm) and caches the binary by version, so a
# warm machine reuses it. Prints the directory holding `helm` on its last line; progress goes to
# stderr.
#
#   LEDGEROPS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/ledgerops or ~/.cache/ledgerops)
#   HELM_VERSION          helm.sh/helm/v3 module version (default below)
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
source "$(dirname "$0")/cache.sh"
tool_cache helm "helm-$HELM_VERSION" .build-helm.lock helm
mkdir -p "$OUT"
start=$(date +%s)

# Helm's go.mod has no replace directives, so `go install module@version` builds it as released.
# Like Helm's Makefile, set the Kubernetes version `helm template` and `helm lint` assume from the
# client-go it is built with (v0.N => 1.N): without it they assume 1.20 and refuse a chart's
# kubeVersion of 1.30+.
field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" <<<"$info"; }
info=$(cd "$ROOT" && GOFLAGS=-mod=mod go mod download -json "helm.sh/helm/v3@$HELM_VERSION") || {
  log "cannot fetch helm.sh/helm/v3@$HELM_VERSION: $(field Error)"; exit 1; }
gomod=$(field GoMod)
client_go=$(sed -n 's/^[[:space:]]*k8s\.io\/client-go v\([0-9.]*\).*$/\1/p' "$gomod" | head -1)
[[ -n "$client_go" ]] || { log "no k8s.io/client-go in $gomod"; exit 1; }
k8s_major=$(( ${client_go%%.*} + 1 ))
k8s_minor=$(cut -d. -f2 <<<"$client_go")
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in pkg/lint/rules pkg/chartutil; do
  ldflags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=$k8s_major -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$k8s_minor"
done
log "building helm $HELM_VERSION through $(go env GOPROXY)"
GOBIN="$OUT/gobin" CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" \
  "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
mv "$OUT/gobin/helm" "$OUT/helm"
rmdir "$OUT/gobin"

log "built in $(( $(date +%s) - start ))s: $OUT ($("$OUT/helm" version --short), assumes Kubernetes $k8s_major.$k8s_minor)"
echo "$OUT"
