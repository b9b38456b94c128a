#!/usr/bin/env bash
# Builds the controller image's binary the way `docker build .` would, without a container engine:
# copies into an empty directory exactly what the Dockerfile's build stage COPYs (less what
# .dockerignore excludes), runs that stage's RUN command there, and checks that every shared
# library the binary needs is in the runtime image. A path the build needs but the Dockerfile
# does not copy fails here as it would fail the image build.
#
#   build-image-context.sh [--dockerfile F] [--check-only] [--prove-copies-needed]
#
#   --check-only           only load the workspace in the context (cargo metadata): seconds
#   --prove-copies-needed  --check-only, then once per COPY line of the build stage with that
#                          line left out, each of which must fail (a workspace member, the lock
#                          file, the manifest: nothing is copied that the build does not need)
#
# The binary's path is printed last. CARGO_TARGET_DIR stands for the RUN line's cache mount of
# <WORKDIR>/target, so a build here reuses what CI built before; the context is
# $CARGO_TARGET_DIR/image-context.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
dockerfile="$repo/Dockerfile"
mode=build
while [ $# -gt 0 ]; do
  case "$1" in
    --dockerfile) dockerfile="$(realpath "$2")"; shift 2 ;;
    --check-only) mode=check; shift ;;
    --prove-copies-needed) mode=prove; shift ;;
    *) echo "usage: $0 [--dockerfile FILE] [--check-only] [--prove-copies-needed]" >&2; exit 2 ;;
  esac
done
[ -f "$dockerfile" ] || { echo "no Dockerfile at $dockerfile" >&2; exit 2; }

# The stage that builds, and the one the image runs from (the last).
build_stage=build

# Shared libraries the runtime image provides. gcr.io/distroless/cc-debian12 is base-debian12
# (Debian 12 packages libc6 and libssl3) plus libgcc-s1, libstdc++6 and libgomp1 and gcc-12-base:
# GoogleContainerTools/distroless, base/config.bzl and cc/config.bzl. The names are those the
# packages install (`dpkg -L PACKAGE` on Debian 12); zlib1g is NOT among them in debian12.
# linux-vdso is the kernel's; ld-linux is libc6's loader (x86-64 and arm64 names).
runtime_libs=(
  linux-vdso.so.1 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1
  libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libutil.so.1 libresolv.so.2
  libanl.so.1 libmvec.so.1 libnsl.so.1 libBrokenLocale.so.1 libthread_db.so.1
  libc_malloc_debug.so.0 libnss_compat.so.2 libnss_dns.so.2 libnss_files.so.2 libnss_hesiod.so.2
  libssl.so.3 libcrypto.so.3
  libgcc_s.so.1 libstdc++.so.6 libgomp.so.1
)

# The Dockerfile as logical instructions, one per line: continuations joined, comments dropped.
instructions() {
  awk '
    /^[[:space:]]*#/ { next }
    { sub(/\r$/, "") }
    /\\$/ { sub(/\\$/, ""); line = line $0 " "; next }
    { line = line $0; if (line ~ /[^[:space:]]/) print line; line = "" }
    END { if (line != "") print line }
  ' "$1"
}

# Prints "KEYWORD ARGS" for the instructions of stage $2 (matched by its AS name) of file $1.
stage_instructions() {
  instructions "$1" | awk -v want="$2" '
    toupper($1) == "FROM" { inside = (tolower($NF) == tolower(want) && tolower($(NF-1)) == "as"); next }
    inside { print }
  '
}

fail() { echo "build-image-context: $*" >&2; exit 1; }

# Copies the build stage's COPY sources of Dockerfile $1 into the empty directory $2, as Docker
# would into WORKDIR; prints the stage's WORKDIR.
assemble() {
  local file="$1" context="$2" workdir="" keyword rest
  local excludes=()
  # .dockerignore's patterns become tar excludes, which match at any depth: stricter than Docker
  # (a root-only pattern also drops deeper namesakes), never looser.
  if [ -f "$repo/.dockerignore" ]; then
    while IFS= read -r pattern; do
      pattern="${pattern%%#*}"; pattern="${pattern%"${pattern##*[![:space:]]}"}"
      [ -n "$pattern" ] || continue
      [[ "$pattern" == !* ]] && fail ".dockerignore exception '$pattern' is not supported here; list what to exclude instead"
      pattern="${pattern#\*\*/}"; pattern="${pattern%/}"
      excludes+=("--exclude=$pattern")
    done < "$repo/.dockerignore"
  fi
  local copies=0
  while read -r keyword rest; do
    case "${keyword^^}" in
      WORKDIR) workdir="$rest" ;;
      COPY|ADD)
        [[ "$rest" == \[* ]] && fail "the JSON form of $keyword is not supported: $keyword $rest"
        local all words=() flags_done=0 word
        # read -a splits without expanding globs.
        read -ra all <<<"$rest"
        for word in "${all[@]}"; do
          if [ $flags_done = 0 ] && [[ "$word" == --* ]]; then
            [[ "$word" == --from=* ]] && continue 2
            continue
          fi
          flags_done=1
          words+=("$word")
        done
        [ ${#words[@]} -ge 2 ] || fail "cannot read '$keyword $rest'"
        local dest="${words[-1]}" n=$((${#words[@]} - 1)) i
        [ -n "$workdir" ] || fail "COPY before WORKDIR in stage $build_stage: the script maps WORKDIR to the context"
        case "$dest" in
          "$workdir") dest=. ;;
          "$workdir"/*) dest="${dest#"$workdir"/}" ;;
          /*) fail "COPY to $dest, outside WORKDIR $workdir: the script maps only WORKDIR to the context" ;;
        esac
        for ((i = 0; i < n; i++)); do
          local src="${words[$i]}"
          [ -e "$repo/$src" ] || fail "COPY $src: no such path in the repository"
          local target="$dest"
          # Docker: several sources, or a destination ending in /, mean "into this directory".
          if [ -f "$repo/$src" ] && { [ "$n" -gt 1 ] || [[ "$dest" == */ ]] || [ "$dest" = . ]; }; then
            target="$dest/$(basename "$src")"
          fi
          mkdir -p "$context/$(dirname "$target")"
          if [ -d "$repo/$src" ]; then
            mkdir -p "$context/$target"
            tar -C "$repo/$src" "${excludes[@]}" -cf - . | tar -C "$context/$target" -xf -
          else
            cp -p "$repo/$src" "$context/$target"
          fi
        done
        copies=$((copies + 1))
        ;;
    esac
  done < <(stage_instructions "$file" "$build_stage")
  [ "$copies" -gt 0 ] || fail "no stage 'AS $build_stage' with COPY lines in $file"
  echo "$workdir"
}

# Loads the workspace in a context assembled from Dockerfile $1; exit status is cargo's.
check() {
  local context
  context="$(mktemp -d)"
  assemble "$1" "$context" >/dev/null
  local status=0
  (cd "$context" && cargo metadata --locked --format-version 1 >/dev/null) || status=$?
  rm -rf "$context"
  return "$status"
}

if [ "$mode" = check ]; then
  check "$dockerfile" || fail "the workspace does not load from what $dockerfile copies (see cargo's error above): add the missing path to the build stage's COPY lines"
  echo "the workspace loads from what $dockerfile copies"
  exit 0
fi

if [ "$mode" = prove ]; then
  check "$dockerfile" || fail "the workspace does not load from what $dockerfile copies (see cargo's error above)"
  # Line numbers of the build stage's own COPY lines (no --from=, no continuation lines).
  mapfile -t lines < <(awk -v want="$build_stage" '
    toupper($1) == "FROM" { inside = (tolower($NF) == tolower(want) && tolower($(NF-1)) == "as"); next }
    inside && toupper($1) == "COPY" && $0 !~ /--from=/ { print NR }
  ' "$dockerfile")
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  for n in "${lines[@]}"; do
    line="$(sed -n "${n}p" "$dockerfile")"
    sed "${n}d" "$dockerfile" > "$scratch/Dockerfile"
    if check "$scratch/Dockerfile" 2>"$scratch/err"; then
      fail "without '$line' the workspace still loads: either that line copies nothing the build needs, or this check cannot see what it misses"
    fi
    echo "without '$line': the build fails, as it must ($(grep -m1 -i 'error' "$scratch/err" | cut -c1-160))"
  done
  exit 0
fi

: "${CARGO_TARGET_DIR:?set CARGO_TARGET_DIR: it stands for the RUN line cache mount of WORKDIR/target}"
# Always the same directory, as WORKDIR is: cargo tells workspace members apart by their path,
# so a new one each time would rebuild them and add their artifacts to the cache on every run.
context="$(realpath -m "$CARGO_TARGET_DIR")/image-context"
rm -rf "$context"
mkdir -p "$context"
workdir="$(assemble "$dockerfile" "$context")"
mapfile -t runs < <(stage_instructions "$dockerfile" "$build_stage" | awk 'toupper($1) == "RUN" { sub(/^[^[:space:]]+[[:space:]]+/, ""); print }')
[ ${#runs[@]} -gt 0 ] || fail "no RUN line in stage $build_stage"
# The cache mount of WORKDIR/target is the reused target directory.
ln -s "$(realpath -m "$CARGO_TARGET_DIR")" "$context/target"
for run in "${runs[@]}"; do
  # BuildKit's flags (cache mounts, network) say how to run, not what: the command follows them.
  command="$(sed -E 's/^([[:space:]]*--[a-z]+=[^[:space:]]+[[:space:]]+)*//' <<<"$run")"
  echo "+ (in the context) $command"
  (cd "$context" && env -u CARGO_TARGET_DIR sh -c "$command")
done

# What the runtime stage copies from the build stage: the binary.
from="$(instructions "$dockerfile" | awk -v want="$build_stage" 'toupper($1) == "COPY" && $2 == "--from=" want { print $3 }' | tail -1)"
case "$from" in
  "$workdir"/*) binary="$context/${from#"$workdir"/}" ;;
  *) fail "the runtime stage copies '$from' from the build stage; the script finds only files under WORKDIR $workdir" ;;
esac
[ -x "$binary" ] || fail "the build stage left no executable at $from"

missing=()
while read -r lib; do
  found=0
  for known in "${runtime_libs[@]}"; do [ "$lib" = "$known" ] && found=1 && break; done
  [ $found = 1 ] || missing+=("$lib")
done < <(ldd "$binary" | awk '{ sub(/^.*\//, "", $1); print $1 }')
if [ ${#missing[@]} -gt 0 ]; then
  fail "$from needs ${missing[*]}, which gcr.io/distroless/cc-debian12 does not provide: link it statically (as libz-sys' \"static\" feature does for zlib) or choose a runtime image that has it"
fi
echo "the image's binary needs only libraries the runtime image has: $(ldd "$binary" | awk '{ sub(/^.*\//, "", $1); printf "%s ", $1 }')"

# The suites' test-only paths (the soak's planted bug, the agent's pause points) exist only with
# the cargo feature test-hooks: the shipped binary must not even know their variables. The suites'
# own binary, built with the feature, holds both (tests/e2e/tests/test_only_paths.rs), so their
# absence here is the feature's absence, not a renamed variable.
for marker in LEDGEROPS_TEST_PLANTED_BUG LEDGEROPS_TEST_PAUSE; do
  if grep -aq "$marker" "$binary"; then
    fail "the image's binary holds $marker: a test-only path is compiled in (is the feature test-hooks enabled in the build stage?)"
  fi
done
echo "the image's binary holds no test-only path"
echo "$binary"
