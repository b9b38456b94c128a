#!/usr/bin/env bash
# Builds the test control plane from Go modules (kube-apiserver, kube-controller-manager and
# kubectl from k8s.io/kubernetes, kine as the etcd-compatible store) and caches the binaries by
# version, so a warm machine reuses them. Prints the directory that holds the binaries on its
# last line.
#
#   LEDGEROPS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/ledgerops or ~/.cache/ledgerops)
#   K8S_VERSION           k8s.io/kubernetes module version (default below)
#   KINE_VERSION          github.com/k3s-io/kine module version (default below)
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.34.4}"
KINE_VERSION="${KINE_VERSION:-v0.17.5}"
source "$(dirname "$0")/cache.sh"
tool_cache control-plane "k8s-$K8S_VERSION-kine-$KINE_VERSION" .build.lock \
  kube-apiserver kube-controller-manager kubectl kine
mkdir -p "$OUT"
work="$ROOT/build/k8s-$K8S_VERSION"
mkdir -p "$work"
start=$(date +%s)

# k8s.io/kubernetes publishes its go.mod with the staging modules at v0.0.0, which the proxy does
# not serve: derive one `replace` per staging module from that go.mod, pinned to the same release.
log "resolving k8s.io/kubernetes@$K8S_VERSION"
gomod=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" \
  | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[[ -f "$gomod" ]] || { log "could not download k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
staging_version="v0.${K8S_VERSION#v1.}"
go_directive=$(sed -n 's/^go \(.*\)$/\1/p' "$gomod" | head -1)
{
  echo "module ledgerops.invalid/control-plane"
  echo
  echo "go $go_directive"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  grep -E '^[[:space:]]*k8s\.io/[a-z0-9./-]+ v0\.0\.0[[:space:]]*$' "$gomod" | awk -v v="$staging_version" '{print "\t" $1 " => " $1 " " v}'
  echo ")"
} > "$work/go.mod"
cat > "$work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
log "go mod tidy (downloads the modules the first time)"
(cd "$work" && go mod tidy >&2)

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
for cmd in kube-apiserver kube-controller-manager kubectl; do
  [[ -x "$OUT/$cmd" ]] && continue
  log "building $cmd $K8S_VERSION"
  (cd "$work" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$OUT/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd" >&2)
  mv "$OUT/$cmd.tmp" "$OUT/$cmd"
done

log "building kine $KINE_VERSION"
GOBIN="$OUT/kine-gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/k3s-io/kine@$KINE_VERSION" >&2
mv "$OUT/kine-gobin/kine" "$OUT/kine"
rmdir "$OUT/kine-gobin"

log "built in $(( $(date +%s) - start ))s: $OUT"
echo "$OUT"
