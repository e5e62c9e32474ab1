#!/bin/sh
# `npm start [-- --catalog NAME]`: on the project's Node (scripts/node-runtime.mjs), install what is
# missing, then run the stack in this process (exec), so a signal sent to it reaches scripts/start.ts.
set -e
cd "$(dirname "$0")/.."
PATH=$(node scripts/node-runtime.mjs --path)
export PATH
node scripts/ensure-install.mjs
exec node --import tsx scripts/start.ts "$@"
