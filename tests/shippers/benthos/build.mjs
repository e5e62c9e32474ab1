#!/usr/bin/env node
// Builds the Benthos binary the shipper test drives (main.go here, Benthos pinned in go.mod and
// go.sum) from the Go module proxy into .cache/tools/benthos-<version>/, once: a stamp beside the
// binary holds a hash of go.mod, go.sum, main.go and `go version`, and a binary with a matching
// stamp is reused. Plain Node with no dependencies, so that scripts/ensure-install.mjs can import
// it before `npm ci` has; run as a script it prints the binary's path (the test's set-up).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const INPUTS = ['go.mod', 'go.sum', 'main.go'];

function fail(why) {
  throw new Error(`cannot build Benthos for the shipper test (tests/shippers/benthos): ${why}`);
}

/** The path of the Benthos binary, built first when there is none for these inputs. */
export function ensureBenthos({ quiet = false } = {}) {
  const goMod = readFileSync(path.join(here, 'go.mod'), 'utf8');
  const version = /github\.com\/redpanda-data\/benthos\/v4 (v\S+)/.exec(goMod)?.[1] ?? fail('go.mod does not require github.com/redpanda-data/benthos/v4');
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error || go.status !== 0) fail(`Go is needed (go.mod asks for ${/^go (\S+)/m.exec(goMod)?.[1]} or later) and \`go version\` failed: ${go.error?.message ?? go.stderr}`);

  const dir = path.join(root, '.cache', 'tools', `benthos-${version}`);
  const binary = path.join(dir, 'benthos');
  const stamp = path.join(dir, '.stamp');
  const hash = createHash('sha256');
  for (const file of INPUTS) hash.update(readFileSync(path.join(here, file)));
  hash.update(go.stdout);
  const want = hash.digest('hex');
  if (existsSync(binary) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return binary;

  mkdirSync(dir, { recursive: true });
  if (!quiet) console.error(`[benthos] building Benthos ${version} into ${path.relative(root, dir)} (modules from the Go module proxy; a minute or two the first time)`);
  const started = Date.now();
  // -mod=readonly: go.sum is committed and complete, so the build never resolves other versions.
  // Built beside and renamed into place, so a running test keeps the binary it started.
  const built = spawnSync('go', ['build', '-mod=readonly', '-trimpath', '-buildvcs=false', '-o', `${binary}.new`, '.'], {
    cwd: here,
    stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'],
  });
  if (built.error || built.status !== 0) fail(`go build exited ${built.status ?? built.error?.message}`);
  renameSync(`${binary}.new`, binary);
  writeFileSync(stamp, want);
  if (!quiet) console.error(`[benthos] built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(ensureBenthos());
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
