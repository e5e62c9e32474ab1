#!/usr/bin/env bash
# Starts a command in a namespace the way a systemd unit with EnvironmentFile= would: the env
# file's KEY=VALUE lines taken as they are (no shell: `&` or `$` in a value stay), one pair of
# outer '…' or "…" around a value removed as systemd does, stdout and stderr to a log, in the
# background; prints the pid.
#
#   scripts/netns/run.sh <netns> <env file> <log file> <working dir> <command...>
set -euo pipefail
ns=$1 envfile=$(realpath "$2") log=$(realpath -m "$3") dir=$4; shift 4
vars=()
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in ''|'#'*) continue ;; esac
  key=${line%%=*} value=${line#*=}
  if [[ $value =~ ^\'(.*)\'$ || $value =~ ^\"(.*)\"$ ]]; then value=${BASH_REMATCH[1]}; fi
  vars+=("$key=$value")
done < "$envfile"
cd "$dir"
ip netns exec "$ns" setsid env "${vars[@]}" "$@" > "$log" 2>&1 < /dev/null &
echo $!
