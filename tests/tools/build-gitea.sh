#!/usr/bin/env bash
# Builds Gitea from its Go module (code.gitea.io/gitea) with SQLite support and caches the binary,
# plus the on-disk assets a non-bindata build reads (options/, templates/, public/), by version.
# Prints the directory holding `gitea` and `assets/` on its last line; progress goes to stderr.
#
#   LEDGEROPS_TOOLS_DIR   cache root (default: $XDG_CACHE_HOME/ledgerops or ~/.cache/ledgerops)
#   GITEA_VERSION         code.gitea.io/gitea module version (default below)
set -euo pipefail

GITEA_VERSION="${GITEA_VERSION:-v1.26.3}"
TAGS="sqlite sqlite_unlock_notify"
source "$(dirname "$0")/cache.sh"
# The binary is moved in last, so its presence means the assets are complete too.
tool_cache gitea "gitea-$GITEA_VERSION" .build-gitea.lock gitea assets/templates assets/options
command -v gcc >/dev/null || { log "gcc is required for the cgo SQLite driver (apt-get install gcc)"; exit 1; }
work="$ROOT/build/gitea-$GITEA_VERSION"
mkdir -p "$work" "$OUT"
start=$(date +%s)

# `go list -m -versions` is not enough: the proxy's version list omits tags it serves (v1.26.3 is
# missing from it), so ask for the exact version and fetch the module source at the same time.
field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" <<<"$info"; }
log "resolving code.gitea.io/gitea@$GITEA_VERSION through $(go env GOPROXY)"
info=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "code.gitea.io/gitea@$GITEA_VERSION") || {
  log "cannot fetch code.gitea.io/gitea@$GITEA_VERSION: $(field Error)"
  log "pick a released version (the proxy's list may omit some it serves):"
  (cd "$work" && go list -m -versions code.gitea.io/gitea >&2) || true
  exit 1
}
gomod=$(field GoMod)
src=$(field Dir)
[[ -f "$gomod" && -d "$src/templates" ]] || { log "download gave no go.mod or source: $info"; exit 1; }
# From 1.27 on Gitea declares `module gitea.dev`, which cannot be required as code.gitea.io/gitea.
module_path=$(sed -n 's/^module \(.*\)$/\1/p' "$gomod")
if [[ "$module_path" != code.gitea.io/gitea ]]; then
  log "Gitea $GITEA_VERSION is the module $module_path, not code.gitea.io/gitea: pick a v1.26.x or older"
  exit 1
fi

# Gitea needs a newer Go than some machines have: let Go fetch that toolchain through the proxy.
go_directive=$(sed -n 's/^go \(.*\)$/\1/p' "$gomod" | head -1)
local_go=$(go env GOVERSION | sed 's/^go//')
if [[ $(printf '%s\n%s\n' "$go_directive" "$local_go" | sort -V | head -1) != "$go_directive" ]]; then
  log "Gitea needs Go $go_directive, found $local_go: using toolchain go$go_directive from the proxy"
  export GOTOOLCHAIN="go$go_directive"
fi

# `go install code.gitea.io/gitea@v` refuses modules with replace directives, and a dependency's
# replaces are ignored anyway, so a wrapper main module carries Gitea's replace (and godebug)
# lines verbatim: without them Go would pick e.g. upstream nektos/act, which Gitea does not build
# against.
{
  echo "module ledgerops.invalid/gitea"
  echo
  echo "go $go_directive"
  echo
  grep -E '^godebug ' "$gomod" || true
  echo
  echo "require code.gitea.io/gitea $GITEA_VERSION"
  echo
  echo "tool code.gitea.io/gitea"
  echo
  grep -E '^replace ' "$gomod"
} > "$work/go.mod"
log "wrapper go.mod: $(grep -c '^replace ' "$work/go.mod") replace lines copied from Gitea"
log "go mod tidy (downloads the modules the first time)"
(cd "$work" && go mod tidy >&2)

# Without the bindata tag Gitea reads options/templates/public from STATIC_ROOT_PATH at run time.
# The module cache is read-only, so copy them out (writable, so the cache dir can be cleaned).
log "copying assets from $src"
rm -rf "$OUT/assets" "$OUT/assets.tmp"
mkdir -p "$OUT/assets.tmp"
for d in options templates public; do
  if [[ -d "$src/$d" ]]; then cp -R "$src/$d" "$OUT/assets.tmp/"; fi
done
chmod -R u+w "$OUT/assets.tmp"
mv "$OUT/assets.tmp" "$OUT/assets"

log "building gitea $GITEA_VERSION with tags '$TAGS' (slow the first time)"
ldflags="-s -w -X main.Version=${GITEA_VERSION#v} -X 'main.Tags=$TAGS'"
(cd "$work" && CGO_ENABLED=1 go build -trimpath -tags "$TAGS" -ldflags "$ldflags" \
  -o "$OUT/gitea.tmp" code.gitea.io/gitea >&2)
mv "$OUT/gitea.tmp" "$OUT/gitea"

log "built in $(( $(date +%s) - start ))s: $OUT ($(du -h "$OUT/gitea" | cut -f1))"
echo "$OUT"
