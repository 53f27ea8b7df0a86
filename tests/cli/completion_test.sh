#!/usr/bin/env bash
# sharectl's bash completion: registered for sharectl, completes commands,
# options, option values and group names from a real sharemgrd, and is
# installed by CMake's install rules.
# Usage: completion_test.sh SHARECTL SHAREMGRD COMPLETION_FILE BUILD_DIR
SHARECTL=$1
SHAREMGRD=$2
COMPLETION=$3
BUILD_DIR=$4
. "$(dirname "$0")/integration_lib.sh"

# The completion runs `sharectl` as the user typed it: put ours first.
mkdir -p "$T/bin"
ln -s "$(realpath "$SHARECTL")" "$T/bin/sharectl"
PATH=$T/bin:$PATH

. "$COMPLETION"
run complete -p sharectl
ok "complete -p: sharectl is completed by _sharectl" \
  '[[ $RC == 0 && $OUT == *"-F _sharectl"*sharectl* ]]'

# comp LINE: completes LINE as if the cursor were at its end; sets
# COMPREPLY and REPLY (the words, sorted, space-separated). With
# COMP_SPLIT_EQ=1, '=' is a word of its own, as readline splits it
# (COMP_WORDBREAKS).
comp() {
  local line=$1 words=$1
  [[ ${COMP_SPLIT_EQ:-0} == 1 ]] && words=${line//=/ = }
  read -ra COMP_WORDS <<<"$words"
  [[ $line == *" " || $words == *"= " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  _sharectl sharectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  REPLY=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
  REPLY=${REPLY% }
}

comp "sharectl add-sh"
ok "a command prefix completes" '[[ $REPLY == add-share ]]'
comp "sharectl "
ALL=$({ "$SHARECTL" --help | awk '/^Commands:/ {f = 1; next} /^$/ {f = 0} f {print $1}'
  echo help; } | sort | tr '\n' ' ')
ok "every command of --help is offered, and help" \
  '[[ "$REPLY " == "$ALL" && $REPLY == *add-share* && $REPLY == *dump* && $REPLY == *remove-share* ]]'
comp "sharectl --js"
ok "global options complete" '[[ $REPLY == --json ]]'
comp "sharectl add-share -"
ok "the command's options, with the global ones after the command" \
  '[[ $REPLY == "--dry-run --help --json --socket -d -n -o -r -s" ]]'
comp "sharectl import --"
ok "long options of import" \
  '[[ $REPLY == *--dfstab*--exports*--skip-unsupported* ]]'
comp "sharectl create -o rw,nosu"
ok "-o completes share_nfs option names after the last comma" \
  '[[ $REPLY == "rw,nosub rw,nosuid" ]]'
mkdir -p "$T/ex/alpha" "$T/ex/beta"
comp "sharectl add-share -s $T/ex/al"
ok "-s completes directories" '[[ $REPLY == "$T/ex/alpha" ]]'
comp "sharectl cache "
ok "cache completes flush" '[[ $REPLY == flush ]]'
comp "sharectl help add-s"
ok "help completes a command name" '[[ $REPLY == add-share ]]'
comp "sharectl help add-share "
ok "help takes one command" '[[ -z $REPLY ]]'

# Item 10 of issue 48. compopt works only inside readline's completion:
# recorded here instead, to see what the completion asks of readline.
COMPOPTS=()
compopt() { COMPOPTS+=("$*"); }
mkdir -p "$T/ex/with space"
COMPOPTS=()
comp "sharectl add-share -s $T/ex/wi"
ok "-s: a folder with a space is one reply, quoted and given its / by readline" \
  '[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == "$T/ex/with space" && " ${COMPOPTS[*]} " == *" -o filenames "* ]]'
COMPOPTS=()
comp "sharectl batch $T/ex/wi"
ok "batch files are file names for readline too" '[[ " ${COMPOPTS[*]} " == *" -o filenames "* ]]'
comp "sharectl cache flush "
ok "cache flush takes nothing more" '[[ -z $REPLY ]]'
comp "sharectl check --sec kr"
ok "--sec completes the flavors" '[[ $REPLY == "krb5 krb5i krb5p" ]]'
comp "sharectl unset -p nos"
ok "unset -p completes properties" '[[ $REPLY == "nosub nosuid" ]]'
# As readline splits it: '=' a word of its own.
comp_rl() { COMP_SPLIT_EQ=1 comp "$1"; }
comp_rl "sharectl create -o rw,sec=kr"
ok "-o: the flavors after sec=, though readline splits the word at =" \
  '[[ $REPLY == "krb5 krb5i krb5p" ]]'
comp_rl "sharectl create -o root=adm"
ok "-o: nothing invented after another option's =" '[[ -z $REPLY ]]'
unset -f compopt

# Group names come from the daemon on the socket given on the line.
start_daemon
sc create alpha >/dev/null
sc create alpine >/dev/null
sc create beta >/dev/null
comp "sharectl --socket $T/sock enable al"
ok "group names complete from the daemon (--socket before the command)" \
  '[[ $REPLY == "alpha alpine" ]]'
comp "sharectl add-share -s $T/ex/alpha --socket=$T/sock be"
ok "--socket= after the command is used" '[[ $REPLY == beta ]]'
comp "sharectl --socket $T/sock import -g b"
ok "-g completes group names" '[[ $REPLY == beta ]]'
comp "sharectl --socket $T/nowhere enable al"
ok "no daemon: no group names, no error" '[[ -z $REPLY ]]'

# Installed beside the man pages by `cmake --install`.
if [[ -n $BUILD_DIR && -f $BUILD_DIR/cmake_install.cmake ]]; then
  run cmake --install "$BUILD_DIR" --prefix "$T/inst"
  ok "cmake --install puts the completion in share/bash-completion" \
    '[[ $RC == 0 && -f $T/inst/share/bash-completion/completions/sharectl &&
        -f $T/inst/share/man/man8/sharectl.8 ]]'
  ok "the installed file is the completion" \
    'cmp -s "$COMPLETION" "$T/inst/share/bash-completion/completions/sharectl"'
fi

report
