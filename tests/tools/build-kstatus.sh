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
source "$(dirname "$0")/cache.sh"
tool_cache kstatus "kstatus-$KEY" .build-kstatus.lock kstatus
start=$(date +%s)
mkdir -p "$OUT"
log "building $(sed -n 's/^[[:space:]]*sigs.k8s.io\/cli-utils \(v[^ ]*\)$/cli-utils \1/p' "$SRC/go.mod") through $(go env GOPROXY)"
(cd "$SRC" && CGO_ENABLED=0 go build -trimpath -o "$OUT/kstatus" .) >&2
log "built in $(( $(date +%s) - start ))s: $OUT"
echo "$OUT"
