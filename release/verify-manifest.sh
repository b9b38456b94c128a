#!/usr/bin/env bash
# Checks a krew manifest against the archives it names, as krew will when it installs:
#
#   release/verify-manifest.sh MANIFEST DIR
#
# For every platform: the archive its URI names is in DIR, under the manifest's version, its
# SHA-256 is the manifest's, and it holds the `bin` and every `files` source the manifest names;
# and every plugin archive in DIR is in the manifest. Exits 1 naming each mismatch.
set -euo pipefail

manifest="${1:?usage: $0 MANIFEST DIR}"
dir="${2:?usage: $0 MANIFEST DIR}"
problems=0
problem() { echo "verify-manifest: $*" >&2; problems=$((problems + 1)); }

# One line per platform: os arch uri sha256 bin from...  (krew's layout, one key a line)
platforms="$(awk '
  function flush() { if (uri != "") print os, arch, uri, sum, bin, from; os = arch = uri = sum = bin = from = "" }
  /^  version:/ { next }
  /^ *- selector:/ { flush() }
  /^ *os:/ { os = $2 }
  /^ *arch:/ { arch = $2 }
  /^ *uri:/ { uri = $2 }
  /^ *sha256:/ { sum = $2; gsub(/"/, "", sum) }
  /^ *bin:/ { bin = $2 }
  /^ *- from:/ { from = from " " $3 }
  END { flush() }
' "$manifest")"
version="$(awk '/^  version:/ { print $2 }' "$manifest")"
[ -n "$platforms" ] || problem "$manifest names no platform"

named=()
while read -r os arch uri sum bin from; do
  [ -n "$os" ] || continue
  archive="$(basename "$uri")"
  named+=("$archive")
  before=$problems
  [[ "$uri" == */download/$version/$archive ]] || problem "$os/$arch: the URI $uri is not under the manifest's version $version"
  if [ ! -f "$dir/$archive" ]; then
    problem "$os/$arch: $archive is not in $dir"
    continue
  fi
  actual="$(sha256sum "$dir/$archive" | cut -d' ' -f1)"
  [ "$actual" = "$sum" ] || problem "$os/$arch: $archive has SHA-256 $actual, the manifest says $sum"
  # krew matches `from` against the unpacked tree: ./x and x are the same file.
  contents="$(tar -tzf "$dir/$archive" | sed "s,^\./,,")"
  for file in $bin $from; do
    grep -qx -- "$file" <<<"$contents" || problem "$os/$arch: $archive has no $file (contents: $(echo $contents))"
  done
  [ "$problems" = "$before" ] && echo "$os/$arch: $archive matches (sha256 $sum; $(echo $contents))"
done <<<"$platforms"

for archive in "$dir"/kubectl-ledgerops_*.tar.gz; do
  [ -e "$archive" ] || continue
  case " ${named[*]} " in
    *" $(basename "$archive") "*) ;;
    *) problem "$(basename "$archive") is in $dir but not in the manifest" ;;
  esac
done
[ "$problems" = 0 ] || exit 1
