#!/usr/bin/env bash
# Proves the npm package as a user gets it. Packs the project (`prepack`
# builds it), checks the tarball holds only the intended files, installs it
# into a clean temporary prefix from a temporary folder (dependencies come
# from the npm registry; nothing resolves into the project folder), then runs
# the installed tool with only that prefix's bin/ on PATH: `berth --version`,
# `git berth status` in a scratch repository, `berth tour`, and man(1) on the
# installed page. A file missing from package.json's "files" fails one of
# these. Run from .ci/run (after `npm ci`); runs anywhere with node, npm, git
# and man-db.
set -euo pipefail

log() { printf 'pack-install: %s\n' "$*" >&2; }
fail() {
  log "FAILED: $*"
  exit 1
}

project="$(cd "$(dirname "$0")/.." && pwd -P)"
work="$(mktemp -d "${TMPDIR:-/tmp}/berth-pack-XXXXXX")"
work="$(cd "$work" && pwd -P)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/pack" "$work/cwd" "$work/home" "$work/prefix"
prefix="$work/prefix"
version="$(node -p 'require(process.argv[1]).version' "$project/package.json")"

log "packing $project"
(cd "$project" && npm pack --pack-destination "$work/pack" >"$work/pack.log" 2>&1) ||
  {
    cat "$work/pack.log" >&2
    fail "npm pack"
  }
shopt -s nullglob
tarballs=("$work/pack"/*.tgz)
[ "${#tarballs[@]}" -eq 1 ] || fail "expected one tarball in $work/pack, found ${#tarballs[@]}"
# A copy outside the project and the pack folder is what gets installed.
tarball="$work/cwd/$(basename "${tarballs[0]}")"
cp "${tarballs[0]}" "$tarball"

log "checking the tarball's file list"
tar -tzf "$tarball" >"$work/contents.txt"
unexpected="$(grep -Ev '^package/(package\.json|README\.md|CHANGELOG\.md|LICENSE|berth\.1|git-berth\.1|dist/cli\.cjs|dist/chunks/[^/]+\.c?js|schemas/[^/]+\.schema\.json)$' "$work/contents.txt" || true)"
[ -z "$unexpected" ] || fail "files the installed tool does not need are in the package:
$unexpected"
for needed in package/dist/cli.cjs package/berth.1 package/git-berth.1 package/schemas/berth.toml.schema.json \
  package/schemas/envelope.schema.json package/schemas/logbook-event.schema.json package/LICENSE; do
  grep -qx "$needed" "$work/contents.txt" || fail "$needed is missing from the package"
done

log "installing $(basename "$tarball") into $prefix"
(
  cd "$work/cwd"
  env -u NODE_PATH npm install --global --prefix "$prefix" --no-audit --no-fund "$tarball" \
    >"$work/install.log" 2>&1
) || {
  cat "$work/install.log" >&2
  fail "npm install --global"
}

installed="$prefix/lib/node_modules/git-berth"
[ -d "$installed" ] && [ ! -L "$installed" ] || fail "$installed is not a real folder"
# Every symlink npm made (bin/, share/man/) points inside the prefix; nothing points at the project.
while IFS= read -r -d '' link; do
  target="$(readlink -f "$link")"
  case "$target" in
  "$prefix"/*) ;;
  *) fail "$link points outside the prefix, at $target" ;;
  esac
done < <(find "$prefix" -type l -print0)
if grep -rqsF -- "$project" "$installed"; then
  fail "the installed files name the project folder $project"
fi

# Only the prefix's commands, node and git: no project node_modules/.bin, no NODE_PATH.
tool_path="$prefix/bin:$(dirname "$(command -v node)"):$(dirname "$(command -v git)"):/usr/bin:/bin"
run() {
  (cd "$work/cwd" && env -u NODE_PATH PATH="$tool_path" HOME="$work/home" \
    GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
    GIT_AUTHOR_NAME="pack install" GIT_AUTHOR_EMAIL="pack@berth.invalid" \
    GIT_COMMITTER_NAME="pack install" GIT_COMMITTER_EMAIL="pack@berth.invalid" \
    NO_COLOR=1 "$@")
}

for command in berth git-berth; do
  [ "$(run sh -c "command -v $command")" = "$prefix/bin/$command" ] ||
    fail "$command does not resolve to $prefix/bin/$command"
done

log "berth --version"
got="$(run berth --version)" || fail "berth --version exited $?"
[ "$got" = "$version" ] || fail "berth --version printed '$got', expected $version"

log "git berth status in a scratch repository"
repo="$work/cwd/scratch"
run git init -q -b main "$repo"
run sh -c "cd '$repo' && echo scratch > README.md && git add README.md && git commit -q -m 'first commit'"
status="$(run sh -c "cd '$repo' && git berth status")" || fail "git berth status exited $?"
grep -q "main" <<<"$status" || fail "git berth status does not show the trunk: $status"
run sh -c "cd '$repo' && git berth status --json" >"$work/status.json" || fail "git berth status --json"
node -e '
  const doc = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (!doc.ok || doc.verb !== "status" || doc.data.worktrees.length !== 1) process.exit(1);
' "$work/status.json" || fail "git berth status --json: unexpected document: $(cat "$work/status.json")"

log "berth tour"
run berth tour >"$work/tour.log" 2>&1 || {
  cat "$work/tour.log" >&2
  fail "berth tour"
}
grep -q "accept" "$work/tour.log" || fail "berth tour did not narrate the landing"

log "man -l $prefix/share/man/man1/berth.1"
page="$prefix/share/man/man1/berth.1"
[ -e "$page" ] || fail "the man page is not installed at $page"
man_text="$(MANWIDTH=100 MANPAGER=cat LC_ALL=C.UTF-8 man -l "$page")" || fail "man -l $page"
for word in "berth worktree prune" "--contained" "git berth"; do
  grep -qF -- "$word" <<<"$man_text" || fail "the installed man page lacks '$word'"
done

log "git berth --help (git shows the git-berth page, which sources berth.1)"
help_text="$(run env MANPATH="$prefix/share/man" MANWIDTH=100 MANPAGER=cat LC_ALL=C.UTF-8 \
  sh -c "cd '$repo' && git berth --help")" || fail "git berth --help"
grep -qF -- "berth worktree prune" <<<"$help_text" || fail "git berth --help does not show berth.1"

log "ok: git-berth $version packs, installs and runs from $prefix"
