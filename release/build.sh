#!/usr/bin/env bash
# Builds the release's files into dist/:
#
#   kubectl-ledgerops_<VERSION>_<os>_<arch>.tar.gz   kubectl-ledgerops, kubectl_complete-ledgerops
#                                                    and LICENSE, one per platform built
#   SHA256SUMS                                       of every file below
#   ledgerops.yaml                                   the krew manifest: one platform per archive,
#                                                    with its real SHA-256
#   ledgerops-<version>.tgz                          the Helm chart (helm package)
#
#   release/build.sh VERSION        e.g. v0.1.0: must be the workspace's and the chart's version
#
# It builds every platform this machine's toolchain can, and says which it skipped and why:
# linux/amd64 and linux/arm64 from Linux (arm64 with Debian's gcc-aarch64-linux-gnu, which it
# installs when it runs as root with apt), darwin/amd64 and darwin/arm64 only on macOS: the
# plugin links Apple's Security and CoreFoundation frameworks (libgit2, the platform's trust
# store), which only Apple's SDK has. Environment:
#
#   CARGO_TARGET_DIR     where cargo builds (default: target/)
#   LEDGEROPS_HELM_BIN   the directory holding helm (default: what tests/tools/build-helm.sh builds)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
version="${1:-}"
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || {
  echo "usage: $0 VERSION (v followed by the workspace version, e.g. v0.1.0)" >&2
  exit 2
}
fail() { echo "release: $*" >&2; exit 1; }
log() { echo "[release] $*" >&2; }

# One version everywhere: the binaries' --version, the chart, the manifest.
workspace="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)"
chart="$(sed -n 's/^version: *//p' charts/ledgerops/Chart.yaml)"
app="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}/\1/p' charts/ledgerops/Chart.yaml)"
for pair in "workspace (Cargo.toml):$workspace" "chart version:$chart" "chart appVersion:$app"; do
  [ "${pair#*:}" = "${version#v}" ] || fail "$version is not the ${pair%%:*} ${pair#*:}: set them alike first"
done

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
dist="$repo/dist"
rm -rf "$dist"
mkdir -p "$dist"
# The archives' bytes depend only on the sources: files sorted, owned by root, dated at the
# commit, gzip without a name or time stamp.
epoch="$(git log -1 --format=%ct 2>/dev/null || date +%s)"

# os/arch, Rust target, why it cannot be built here (empty: it can).
can_build() {
  local target="$1"
  case "$(uname -s)/$target" in
    Linux/x86_64-unknown-linux-gnu | Darwin/*-apple-darwin) ;;
    Linux/aarch64-unknown-linux-gnu)
      if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
          log "installing gcc-aarch64-linux-gnu (the arm64 linker and C compiler for ring, libgit2, zlib)"
          apt-get update -qq >&2 && apt-get install -y -qq gcc-aarch64-linux-gnu >&2
        else
          echo "no aarch64-linux-gnu-gcc: install Debian's gcc-aarch64-linux-gnu (or your distribution's aarch64 cross gcc)"
          return
        fi
      fi
      ;;
    Linux/*-apple-darwin)
      echo "the plugin links Apple's Security and CoreFoundation frameworks, which only Apple's SDK has (zig's cross toolchain has libSystem, not the frameworks): build it on macOS"
      return
      ;;
    *) echo "not built from $(uname -s)"; return ;;
  esac
  if [ ! -d "$(rustc --print target-libdir --target "$target")" ]; then
    command -v rustup >/dev/null || { echo "the Rust standard library for $target is missing and there is no rustup to add it"; return; }
    log "rustup target add $target"
    rustup target add "$target" >&2
  fi
}

platforms=(
  "linux amd64 x86_64-unknown-linux-gnu"
  "linux arm64 aarch64-unknown-linux-gnu"
  "darwin amd64 x86_64-apple-darwin"
  "darwin arm64 aarch64-apple-darwin"
)
built=()
skipped=()
for platform in "${platforms[@]}"; do
  read -r os arch target <<<"$platform"
  why="$(can_build "$target")"
  if [ -n "$why" ]; then
    log "skipping $os/$arch: $why"
    skipped+=("$os/$arch: $why")
    continue
  fi
  log "building $os/$arch ($target)"
  env_cross=()
  strip=strip
  if [ "$target" = aarch64-unknown-linux-gnu ] && [ "$(uname -m)" != aarch64 ]; then
    env_cross=(
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
      CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
      AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
    )
    strip=aarch64-linux-gnu-strip
  fi
  # The host's build goes where the image's went (target/release), sharing its dependencies.
  if [ "$target" = "$(rustc -vV | sed -n 's/^host: //p')" ]; then
    out="$CARGO_TARGET_DIR/release"
    cargo build --release --locked -p ledgerops-plugin --bins >&2
  else
    out="$CARGO_TARGET_DIR/$target/release"
    env "${env_cross[@]}" cargo build --release --locked -p ledgerops-plugin --bins --target "$target" >&2
  fi
  stage="$(mktemp -d)"
  for bin in kubectl-ledgerops kubectl_complete-ledgerops; do
    cp "$out/$bin" "$stage/"
    # Symbols are a third of the binary and of no use to a person running it.
    "$strip" "$stage/$bin"
  done
  cp LICENSE "$stage/"
  archive="kubectl-ledgerops_${version}_${os}_${arch}.tar.gz"
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -cf - kubectl-ledgerops kubectl_complete-ledgerops LICENSE | gzip -n -9 > "$dist/$archive"
  rm -rf "$stage"
  built+=("$os $arch $archive")
done
[ ${#built[@]} -gt 0 ] || fail "no platform could be built here"

# The manifest: the template with the version and one platform per archive built.
entries=""
for b in "${built[@]}"; do
  read -r os arch archive <<<"$b"
  sum="$(sha256sum "$dist/$archive" | cut -d' ' -f1)"
  entries+="    - selector:
        matchLabels:
          os: $os
          arch: $arch
      uri: https://github.com/ledgerops/ledgerops/releases/download/$version/$archive
      sha256: \"$sum\"
      bin: kubectl-ledgerops
      files:
        - from: kubectl-ledgerops
          to: .
        - from: kubectl_complete-ledgerops
          to: .
        - from: LICENSE
          to: .
"
done
ENTRIES="${entries%$'\n'}" awk -v version="$version" '
  NR == 1 { print "# The krew manifest of kubectl ledgerops " version ", written by release/build.sh." }
  # The template says how to use the template.
  /^#/ { next }
  /^@PLATFORMS@$/ { print ENVIRON["ENTRIES"]; next }
  { gsub(/@VERSION@/, version); print }
' release/ledgerops.krew.yaml.in > "$dist/ledgerops.yaml"
grep -q '@[A-Z]*@' "$dist/ledgerops.yaml" && fail "a placeholder of release/ledgerops.krew.yaml.in was left in dist/ledgerops.yaml"

# The chart.
helm_dir="${LEDGEROPS_HELM_BIN:-$(bash tests/tools/build-helm.sh | tail -1)}"
"$helm_dir/helm" lint --strict charts/ledgerops >&2
"$helm_dir/helm" package charts/ledgerops -d "$dist" >&2

(cd "$dist" && sha256sum -- * > SHA256SUMS)
bash release/verify-manifest.sh "$dist/ledgerops.yaml" "$dist"

echo
echo "dist/ for $version:"
(cd "$dist" && ls -l)
echo "built: $(for b in "${built[@]}"; do read -r os arch _ <<<"$b"; printf '%s/%s ' "$os" "$arch"; done)"
for s in "${skipped[@]}"; do echo "skipped $s"; done
