#!/usr/bin/env bash
# Builds promtool from Prometheus's Go module (github.com/prometheus/prometheus/cmd/promtool) and
# caches the binary by version, so a warm machine reuses it. Prints the directory holding
# `promtool` on its last line; progress goes to stderr.
#
#   LEDGEROPS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/ledgerops or ~/.cache/ledgerops)
#   PROMTOOL_VERSION      github.com/prometheus/prometheus module version (default below; Prometheus
#                         3.N is tagged v0.3NN.0 for Go)
set -euo pipefail

PROMTOOL_VERSION="${PROMTOOL_VERSION:-v0.316.0}"
source "$(dirname "$0")/cache.sh"
tool_cache promtool "promtool-$PROMTOOL_VERSION" .build-promtool.lock promtool
mkdir -p "$OUT"
start=$(date +%s)

# Prometheus's go.mod has no replace directives, so `go install module@version` builds it as
# released. The version stamp is what `promtool --version` prints.
ldflags="-s -w -X github.com/prometheus/common/version.Version=$PROMTOOL_VERSION"
log "building promtool $PROMTOOL_VERSION through $(go env GOPROXY)"
GOBIN="$OUT/gobin" CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" \
  "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" >&2
mv "$OUT/gobin/promtool" "$OUT/promtool"
rmdir "$OUT/gobin"

log "built in $(( $(date +%s) - start ))s: $OUT ($("$OUT/promtool" --version 2>&1 | head -1))"
echo "$OUT"
