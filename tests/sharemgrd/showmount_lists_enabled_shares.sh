#!/usr/bin/env bash
# showmount -e lists exactly the shares of enabled groups with the names of
# their access lists; a disabled group's shares vanish from it.
source "$(dirname "$0")/../support/daemon_lib.sh"
sm_setup
ensure_rpcbind
SM_RPCBIND=1 start_daemon
read -r a b c d <<<"$(make_dirs a b c d)"

cat >"$SM_DIR/batch" <<B
create g1
create g2
create g3
add-share -o rw=alpha.example:beta -s $a g1
add-share -o ro=@192.0.2.0/24 -s $b g1
add-share -s $c g2
add-share -s $d g3
disable g3
B
sc batch "$SM_DIR/batch" || fail "batch refused"

listing() { showmount -e 127.0.0.1 | tail -n +2 | sort; }
out=$(listing)
echo "$out"
# exactly the shares of g1 and g2
paths=$(awk '{print $1}' <<<"$out" | sort | tr '\n' ' ')
assert_eq "$(printf '%s\n' "$a" "$b" "$c" | sort | tr '\n' ' ')" "$paths" \
  "exported paths"
line_a=$(grep "^$a " <<<"$out")
assert_contains "$line_a" "alpha.example" "list names of $a"
assert_contains "$line_a" "beta" "list names of $a"
assert_contains "$(grep "^$b " <<<"$out")" "192.0.2.0" "list names of $b"
assert_contains "$(grep "^$c " <<<"$out")" "(everyone)" "open share $c"

sc disable g2 || fail "disable g2 refused"
out=$(listing)
paths=$(awk '{print $1}' <<<"$out" | sort | tr '\n' ' ')
assert_eq "$(printf '%s\n' "$a" "$b" | sort | tr '\n' ' ')" "$paths" \
  "exported paths after disable g2"
echo "ok"
