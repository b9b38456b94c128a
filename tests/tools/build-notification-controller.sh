#!/usr/bin/env bash
# Builds Flux's notification-controller from its Go module (github.com/fluxcd/notification-controller)
# and caches the binary, with the CRDs of the same version (crds/), by version. Prints the
# directory holding `notification-controller` and `crds/` on its last line; progress goes to stderr.
#
#   LEDGEROPS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/ledgerops or ~/.cache/ledgerops)
#   FLUX_NC_VERSION       github.com/fluxcd/notification-controller module version (default below;
#                         v1.7 and newer are not served by this machine's proxy)
set -euo pipefail

FLUX_NC_VERSION="${FLUX_NC_VERSION:-v1.6.0}"
module=github.com/fluxcd/notification-controller
source "$(dirname "$0")/cache.sh"
# The binary is moved in last, so its presence means the CRDs are complete too.
tool_cache notification-controller "notification-controller-$FLUX_NC_VERSION" \
  .build-notification-controller.lock notification-controller crds
work="$ROOT/build/notification-controller-$FLUX_NC_VERSION"
mkdir -p "$work" "$OUT"
start=$(date +%s)

field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" <<<"$info"; }
log "fetching $module@$FLUX_NC_VERSION through $(go env GOPROXY)"
info=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$FLUX_NC_VERSION") || {
  log "cannot fetch $module@$FLUX_NC_VERSION: $(field Error)"
  exit 1
}
gomod=$(field GoMod)
src=$(field Dir)
[[ -f "$gomod" && -d "$src/config/crd/bases" ]] || { log "download gave no go.mod or CRDs: $info"; exit 1; }

# `go install module@v` refuses a module with replace directives, so a wrapper main module carries
# them. Its API is a nested module (./api, left out of the module zip): take it at the same
# version, which Flux tags as api/vX.Y.Z. Every other replace line is copied verbatim.
go_directive=$(sed -n 's/^go \(.*\)$/\1/p' "$gomod" | head -1)
{
  echo "module ledgerops.invalid/notification-controller"
  echo
  echo "go $go_directive"
  echo
  echo "require $module $FLUX_NC_VERSION"
  echo
  echo "tool $module"
  echo
  grep -E '^replace ' "$gomod" | grep -v "=> \./" || true
  echo "replace $module/api => $module/api $FLUX_NC_VERSION"
} > "$work/go.mod"
log "go mod tidy (downloads the modules the first time)"
(cd "$work" && go mod tidy >&2)

rm -rf "$OUT/crds"
mkdir -p "$OUT/crds"
cp "$src"/config/crd/bases/*.yaml "$OUT/crds/"
chmod -R u+w "$OUT/crds"

log "building notification-controller $FLUX_NC_VERSION (slow the first time)"
(cd "$work" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
  -o "$OUT/notification-controller.tmp" "$module" >&2)
mv "$OUT/notification-controller.tmp" "$OUT/notification-controller"

log "built in $(( $(date +%s) - start ))s: $OUT ($(du -h "$OUT/notification-controller" | cut -f1))"
echo "$OUT"
