#!/usr/bin/env bash
# A followed exports file whose first version is refused is still listed
# by `sharectl stats` (issue 48, item 1): before, only files whose group
# once existed were, and `--json stats` had no member for followed files.
# Each file shows its state: applied (at which generation), or refused
# since when and why, and whether anything of it is served.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
read -r a b <<<"$(make_dirs a b)"
mkdir -p "$SM_DIR/exports.d"
good=$SM_DIR/exports.d/good.exports
bad=$SM_DIR/exports.d/bad.exports
printf '%s *(rw)\n' "$a" >"$good"
printf '%s *(rw,frobnicate)\n' "$b" >"$bad"
start_daemon --follow-exports "$SM_DIR/exports.d/*.exports"
st=$(sc stats)
echo "$st"
assert_contains "$st" "$bad -> group exports-bad (not created): not applied since " \
  "the refused file is listed"
assert_contains "$st" "$bad:1: " "its line is named"
assert_contains "$st" "nothing of it is served" "says nothing of it is served"
assert_contains "$st" "$good -> group exports-good (1 share): ok (applied at generation " \
  "the good file"
js=$(sc --json stats)
assert_eq 2 "$(jq '.followed | length' <<<"$js")" "followed files in JSON"
assert_eq "exports-bad" "$(jq -r --arg p "$bad" '.followed[] | select(.path == $p) | .group' <<<"$js")" "group"
jq -e --arg p "$bad" '.followed[] | select(.path == $p) | .applied_generation == null and (.error | contains("frobnicate")) and (.error_since | test("Z$"))' <<<"$js" >/dev/null ||
  fail "the refused file's JSON: $(jq -c .followed <<<"$js")"
jq -e --arg p "$good" '.followed[] | select(.path == $p) | .applied_generation > 0 and .error == null and .in_step' <<<"$js" >/dev/null ||
  fail "the good file's JSON: $(jq -c .followed <<<"$js")"
# Fixed: applied, listed as such.
gen=$(sc --json stats | jq .generation)
printf '%s *(rw)\n' "$b" >"$bad.tmp" && mv "$bad.tmp" "$bad"
for _ in $(seq 100); do
  [[ $(sc --json stats | jq .generation) -gt $gen ]] && break
  sleep 0.1
done
assert_contains "$(sc stats)" "$bad -> group exports-bad (1 share): ok (applied at generation $((gen + 1)))" \
  "the fixed file"
echo "ok"
