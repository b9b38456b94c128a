# Sourced by the build-*.sh scripts: the tool cache they share. `tool_cache NAME DIR LOCK PATH...`
# sets ROOT (the cache root: $LEDGEROPS_TOOLS_DIR, else $XDG_CACHE_HOME/ledgerops or
# ~/.cache/ledgerops) and OUT ($ROOT/bin/DIR), defines `log` (to stderr, tagged NAME), takes the
# lock $ROOT/LOCK (test binaries running at once may all ask for a tool: one builds, the others
# wait; each tool has its own lock so a long build does not hold up a cached tool), and when every
# PATH (relative to OUT) exists prints OUT and exits: the tool is cached. Otherwise it checks that
# Go is there and returns, with GOFLAGS defaulting to -buildvcs=false.

tool_cache() {
  local name="$1" dir="$2" lock="$3"
  shift 3
  ROOT="${LEDGEROPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ledgerops}"
  OUT="$ROOT/bin/$dir"
  eval "log() { echo \"[$name] \$*\" >&2; }"
  mkdir -p "$ROOT"
  exec 9>"$ROOT/$lock"
  flock 9
  local path cached=1
  for path in "$@"; do
    [[ -e "$OUT/$path" ]] || cached=0
  done
  if (( cached )); then
    log "cached: $OUT"
    echo "$OUT"
    exit 0
  fi
  command -v go >/dev/null || { log "Go is required (https://go.dev/dl); none found on PATH"; exit 1; }
  export GOFLAGS="${GOFLAGS:--buildvcs=false}"
}
