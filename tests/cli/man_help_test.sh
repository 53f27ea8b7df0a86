#!/usr/bin/env bash
# `PROGRAM --help` and PROGRAM's manual page list the same options.
# Usage: man_help_test.sh MAN_DIR SHARECTL [SHAREMGRD]
# sharemgrd is checked when both its binary and sharemgrd.8 exist.
set -uo pipefail
dir=$1
fail=0
checked=0

help_options() {  # options as written in --help: -o, --socket
  "$1" --help 2>&1 | grep -oE '(^|[][ {|(,])--?[A-Za-z][A-Za-z0-9-]*' |
    sed -E 's/^[][ {|(,]//' | sort -u
}
man_options() {  # options as marked up in mdoc: .Fl o, Fl -socket
  grep -oE '(^\.| )Fl [A-Za-z-][A-Za-z0-9-]*' "$1" |
    sed -E 's/^.?Fl /-/' | sort -u
}

compare() {  # NAME BINARY PAGE
  local h m
  h=$(help_options "$2")
  m=$(man_options "$3")
  if [[ -z $h ]]; then echo "FAIL $1: --help lists no options"; fail=1; return; fi
  if [[ $h != "$m" ]]; then
    echo "FAIL $1: options differ (< --help, > $3):"
    diff <(echo "$h") <(echo "$m")
    fail=1
  fi
  checked=$((checked + 1))
}

compare sharectl "$2" "$dir/sharectl.8"

# sharectl's commands: the "Commands:" section of --help against the
# commands the page describes (.It Cm NAME, or .Cm NAME after .It Xo).
help_commands=$("$2" --help | awk '/^Commands:/ {f = 1; next} /^$/ {f = 0} f {print $1}' | sort -u)
man_commands=$(awk '/^\.It Cm / {print $3} prev == ".It Xo" && /^\.Cm / {print $2} {prev = $0}' \
  "$dir/sharectl.8" | sort -u)
if [[ $help_commands != "$man_commands" ]]; then
  echo "FAIL sharectl: commands differ (< --help, > sharectl.8):"
  diff <(echo "$help_commands") <(echo "$man_commands")
  fail=1
else
  checked=$((checked + 1))
fi
if [[ -n ${3:-} && -x $3 && -f $dir/sharemgrd.8 ]]; then
  compare sharemgrd "$3" "$dir/sharemgrd.8"
else
  echo "sharemgrd or sharemgrd.8 not built yet: only sharectl checked"
fi
((fail == 0)) && echo "$checked passed, 0 failed"
exit $fail
