#!/usr/bin/env bash
# The test run, in numbered phases (`npm test`; CI's .ci/run calls `npm test`).
#   1  install what is missing (npm packages, the Python venv)
#   2  typecheck the whole tree
#   3  vitest: unit tests and the integration tests against the real stack
#   10 the local-stack integration check: the quickstart by the real CLI, API and roller
# One local stack serves phases 3 and 10: the running one (`npm start`) or one started here.
set -uo pipefail
cd "$(dirname "$0")/.."
stack_dir=${TABLEMERE_STACK_DIR:-.stack}
phase() { printf '\n=== phase %s: %s\n' "$1" "$2"; }
# Every node below (tsc, vitest, the stack, the CLI) runs on Node >= 22: the machine's own, or the
# project's Node 24 (scripts/node-runtime.mjs).
PATH=$(node scripts/node-runtime.mjs --path) || exit 1
export PATH
echo "[node] $(command -v node) $(node --version)"

phase 1 install
node scripts/ensure-install.mjs --quiet --tests || exit 1

phase 2 typecheck
npx tsc -p tsconfig.json --noEmit || exit 1

stack_pid=
stop_stack() {
  if [ -n "$stack_pid" ]; then
    kill -INT "$stack_pid" 2>/dev/null
    wait "$stack_pid" 2>/dev/null
  fi
}
trap stop_stack EXIT
live() { [ -f "$stack_dir/env" ] && (source "$stack_dir/env" && curl -sf -o /dev/null "$TABLEMERE_API_URL/healthz"); }
if live; then
  echo "[stack] using the running local stack ($stack_dir)"
else
  node --import tsx scripts/start.ts &
  stack_pid=$!
  for _ in $(seq 1 240); do
    live && break
    kill -0 "$stack_pid" 2>/dev/null || { echo "the local stack did not start (output above)"; exit 1; }
    sleep 0.5
  done
  live || { echo "the local stack did not become ready in 120 s"; exit 1; }
fi

phase 3 vitest
# The files whose tests race another writer's commits run afterwards, alone: on two cores a heavy
# file beside them (a second stack, a 1,000-batch roll) can slow every commit attempt past the
# rival's next commit, and the roll then loses every race it is meant to win eventually. The faults
# drill (a stack of its own under 16 producers) and the multi-host phase (namespaces, a link cut
# mid-roll) run alone too: their timings are what they assert.
alone=(apps/roller/test/concurrency.test.ts apps/roller/test/upkeep.test.ts tests/faults.test.ts tests/multi-host.test.ts)
v_passed=0 v_failed=0 vitest_status=0
run_vitest() {
  local report status passed failed
  report=$(mktemp)
  npx vitest run --reporter=default --reporter=json --outputFile="$report" "$@"
  status=$?
  # The counts, and the failures again one line each (into $failures), so that the end of a
  # long log still names them.
  read -r passed failed < <(node -e "
    const fs = require('fs');
    let r;
    try { r = JSON.parse(fs.readFileSync('$report', 'utf8')); } catch { console.log('0 1'); process.exit(); }
    console.log(r.numPassedTests, r.numFailedTests);
    const lines = [];
    for (const file of r.testResults) {
      const failed = file.assertionResults.filter((t) => t.status === 'failed');
      if (file.status === 'failed' && failed.length === 0) lines.push(['FAILED', file.name, '(outside any test):', (file.message || '').split('\\n')[0].slice(0, 300)].join(' '));
      for (const t of failed) lines.push(['FAILED', file.name, '>', t.fullName, ':', (t.failureMessages[0] || '').split('\\n')[0].slice(0, 300)].join(' '));
    }
    fs.appendFileSync('$failures', lines.map((l) => l + '\\n').join(''));")
  rm -f "$report"
  # A file that fails outside any test (an import error, a failed hook, an unhandled error)
  # still counts as a failure.
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1
    echo "FAILED vitest $* exited with $status without a failed test: an unhandled error or a failed hook (its output above)" >> "$failures"
  fi
  [ "$status" -eq 0 ] || vitest_status=$status
  v_passed=$((v_passed + passed)) v_failed=$((v_failed + failed))
}
failures=$(mktemp)
run_vitest "${alone[@]/#/--exclude=}"
run_vitest --maxWorkers=1 "${alone[@]}"

phase 10 "local-stack integration check"
phase10_out=$(mktemp)
bash tests/phase10/run.sh | tee "$phase10_out"
p10_status=${PIPESTATUS[0]}
read -r p_passed p_failed < <(sed -n 's/^phase 10: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$phase10_out")
rm -f "$phase10_out"
p_passed=${p_passed:-0} p_failed=${p_failed:-1}
[ "$p10_status" -eq 0 ] || [ "$p_failed" -gt 0 ] || p_failed=1

echo
sed "s#$PWD/##" "$failures"
rm -f "$failures"
echo "tests: $((v_passed + p_passed)) passed, $((v_failed + p_failed)) failed"
[ "$vitest_status" -eq 0 ] && [ "$p10_status" -eq 0 ]
