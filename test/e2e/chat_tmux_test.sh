#!/usr/bin/env bash
# llmc chat in a real terminal: starts it inside a detached tmux session of a
# fixed size, types two turns with send-keys and checks the screen for the
# prompt marker, both replies and the --stats line showing that the second
# turn reused cached tokens. Every wait is bounded; the session is killed on
# exit, whatever happens.
#
# usage: chat_tmux_test.sh BIN_DIR DATA_DIR
set -euo pipefail
bin=${1:?usage: chat_tmux_test.sh BIN_DIR DATA_DIR}
data=${2:?usage: chat_tmux_test.sh BIN_DIR DATA_DIR}
export LLMC_BACKEND_PATH=${LLMC_BACKEND_PATH:-$bin}

work=$(mktemp -d)
session="llmc-chat-test-$$"
# A private server socket: never touches the user's tmux sessions.
tm() { tmux -L "$session" "$@"; }
cleanup() {
  tm kill-session -t "$session" 2>/dev/null || true
  tm kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "---- screen ----" >&2
  tm capture-pane -p -t "$session" -S - 2>/dev/null >&2 || true
  exit 1
}

# (capture-pane trims trailing blanks: the marker "> " reads as ">".)
# Polls the whole pane history until grep -E finds $1 (count $2), at most
# $3 seconds.
wait_for() {
  local pattern=$1 count=$2 limit=$3 waited=0
  while :; do
    local n
    n=$(tm capture-pane -p -t "$session" -S - 2>/dev/null | grep -cE -- "$pattern" || true)
    [ "${n:-0}" -ge "$count" ] && return 0
    [ "$waited" -ge $((limit * 10)) ] && return 1
    sleep 0.1
    waited=$((waited + 1))
  done
}

"$bin/llmc" compile "$data/models/gpt2" -o "$work/gpt2.plan" >"$work/compile.log" 2>&1 ||
  { cat "$work/compile.log" >&2; fail "llmc compile"; }

tm new-session -d -s "$session" -x 200 -y 50 \
  "$bin/llmc chat $work/gpt2.plan --chat-template $data/chat-templates/smollm2-instruct.jinja --max-new-tokens 6 --stats; echo CHAT-EXITED=\$?; sleep 600"

wait_for '^>( |$)' 1 60 || fail "no prompt marker '> '"
tm send-keys -t "$session" 'Hello there' Enter
wait_for '\[stats\] turn 1: prefilled [1-9][0-9]* tokens, reused 0' 1 60 ||
  fail "no stats line for turn 1"
wait_for '^>( |$)' 2 30 || fail "no prompt marker after turn 1"
tm send-keys -t "$session" 'Tell me more' Enter
wait_for '\[stats\] turn 2: prefilled [1-9][0-9]* tokens, reused [1-9][0-9]* from cache' 1 60 ||
  fail "turn 2 did not reuse the cache"
tm send-keys -t "$session" '/exit' Enter
wait_for 'CHAT-EXITED=0' 1 30 || fail "llmc chat did not exit cleanly"

screen=$(tm capture-pane -p -t "$session" -S -)
# Each reply is the non-empty text on the line after the typed message.
reply1=$(printf '%s\n' "$screen" | grep -A1 -F '> Hello there' | sed -n 2p)
reply2=$(printf '%s\n' "$screen" | grep -A1 -F '> Tell me more' | sed -n 2p)
[ -n "${reply1// /}" ] && [[ $reply1 != '[stats]'* ]] || fail "no reply text for turn 1"
[ -n "${reply2// /}" ] && [[ $reply2 != '[stats]'* ]] || fail "no reply text for turn 2"
echo "PASS: two turns, second reused the KV cache"
