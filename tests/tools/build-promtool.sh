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
ROOT="${LEDGEROPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ledgerops}"
OUT="$ROOT/bin/promtool-$PROMTOOL_VERSION"

log() { echo "[promtool] $*" >&2; }

# Its own lock, so a promtool build does not hold up the other tools.
mkdir -p "$ROOT"
exec 9>"$ROOT/.build-promtool.lock"
flock 9

if [[ -x "$OUT/promtool" ]]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null || { log "Go is required (https://go.dev/dl); none found on PATH"; exit 1; }
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
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
