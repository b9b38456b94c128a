#!/usr/bin/env bash
# Builds Mailpit from its Go module (github.com/axllent/mailpit) and caches the binary by version,
# so a warm machine reuses it. Prints the directory holding `mailpit` on its last line; progress
# goes to stderr.
#
#   LEDGEROPS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/ledgerops or ~/.cache/ledgerops)
#   MAILPIT_VERSION       github.com/axllent/mailpit module version (default below)
set -euo pipefail

MAILPIT_VERSION="${MAILPIT_VERSION:-v1.33.1}"
source "$(dirname "$0")/cache.sh"
tool_cache mailpit "mailpit-$MAILPIT_VERSION" .build-mailpit.lock mailpit
mkdir -p "$OUT"
start=$(date +%s)

# Mailpit's go.mod has no replace directives, so `go install module@version` builds it as
# released; its SQLite driver is pure Go (modernc), so no cgo. The module has no web UI bundle
# (server/ui/dist is built with npm and not published): the SMTP server and the HTTP API, which
# the tests read, are all there. The version stamp is what `mailpit version` prints.
ldflags="-s -w -X github.com/axllent/mailpit/config.Version=$MAILPIT_VERSION"
log "building Mailpit $MAILPIT_VERSION through $(go env GOPROXY)"
GOBIN="$OUT/gobin" CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" \
  "github.com/axllent/mailpit@$MAILPIT_VERSION" >&2
mv "$OUT/gobin/mailpit" "$OUT/mailpit"
rmdir "$OUT/gobin"

log "built in $(( $(date +%s) - start ))s: $OUT ($("$OUT/mailpit" version --no-release-check 2>&1 | head -1))"
echo "$OUT"
