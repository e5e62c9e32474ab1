// Builds a Go program a shipper test drives (Benthos, Telegraf) into
// .cache/tools/<name>-<version>/, once: a stamp beside the binary holds what it was built from,
// how, and `go version`, and a binary with a matching stamp is reused. Plain Node with no
// dependencies, so that scripts/ensure-install.mjs can import it before `npm ci` has.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The path of `name`'s binary, built first when there is none with this stamp. `inputs` says
 * what the build is made of (a hash of its files, a module's version); `goWanted` the Go its
 * go.mod asks for; `source(fail)` returns the directory to build in; `args` go after
 * `go build -o <binary>`.
 */
export function ensureGoTool({ name, title, version, inputs, goWanted, source, args, quiet = false }) {
  const fail = (why) => {
    throw new Error(`cannot build ${title} ${version} for the shipper test (tests/shippers/${name}): ${why}`);
  };
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error || go.status !== 0) fail(`Go ${goWanted} or later is needed and \`go version\` failed: ${go.error?.message ?? go.stderr}`);

  const dir = path.join(root, '.cache', 'tools', `${name}-${version}`);
  const binary = path.join(dir, name);
  const stamp = path.join(dir, '.stamp');
  const want = JSON.stringify({ inputs, args, go: go.stdout.trim() });
  if (existsSync(binary) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return binary;

  mkdirSync(dir, { recursive: true });
  if (!quiet) console.error(`[${name}] building ${title} ${version} into ${path.relative(root, dir)} (modules from the Go module proxy; a minute or two the first time)`);
  const started = Date.now();
  const cwd = source(fail);
  // -mod=readonly: the go.sum used is complete, so the build never resolves other versions.
  // Built beside and renamed into place, so a running test keeps the binary it started.
  const built = spawnSync('go', ['build', '-mod=readonly', '-trimpath', '-buildvcs=false', '-o', `${binary}.new`, ...args], {
    cwd,
    stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'],
  });
  if (built.error || built.status !== 0) fail(`go build exited ${built.status ?? built.error?.message}`);
  renameSync(`${binary}.new`, binary);
  writeFileSync(stamp, want);
  if (!quiet) console.error(`[${name}] built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return binary;
}

/** Run as a script (`node <build.mjs>`, the test's set-up), `ensure` prints the binary's path. */
export function printWhenRun(moduleUrl, ensure) {
  if (process.argv[1] !== fileURLToPath(moduleUrl)) return;
  try {
    console.log(ensure());
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
