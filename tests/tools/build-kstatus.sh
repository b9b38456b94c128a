#!/usr/bin/env bash
# Builds tests/tools/kstatus (a small program around sigs.k8s.io/cli-utils' kstatus library, the
# health check of Flux, Argo CD, kpt and Config Sync) and caches it by the hash of its sources, so
# a warm machine reuses it. Prints the directory holding `kstatus` on its last line; progress goes
# to stderr.
#
#   LEDGEROPS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/ledgerops or ~/.cache/ledgerops)
set -euo pipefail

SRC="$(cd "$(dirname "$0")/kstatus" && pwd)"
# go.mod pins the library's version; the hash covers it, go.sum and the program.
KEY=$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-12)
ROOT="${LEDGEROPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ledgerops}"
OUT="$ROOT/bin/kstatus-$KEY"

log() { echo "[kstatus] $*" >&2; }

mkdir -p "$ROOT"
exec 9>"$ROOT/.build-kstatus.lock"
flock 9

if [[ -x "$OUT/kstatus" ]]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null || { log "Go is required (https://go.dev/dl); none found on PATH"; exit 1; }
start=$(date +%s)
mkdir -p "$OUT"
log "building $(sed -n 's/^[[:space:]]*sigs.k8s.io\/cli-utils \(v[^ ]*\)$/cli-utils \1/p' "$SRC/go.mod") through $(go env GOPROXY)"
(cd "$SRC" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o "$OUT/kstatus" .) >&2
log "built in $(( $(date +%s) - start ))s: $OUT"
echo "$OUT"
