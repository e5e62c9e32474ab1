import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SEND_NESTING_LIMIT } from '@tablemere/contracts';
import { generatedBodies } from './array-bodies.ts';

/**
 * The C check's fuzz driver (apps/api/native/fuzz/driver.c): built with the check under
 * AddressSanitizer and UBSan, run on a seed corpus of the differential test's bodies and
 * their mutations (array-bodies.ts). `npm test` runs it for ~30 s (native-fuzz.test.ts);
 * `npm run fuzz:scan -- --seconds N` for longer.
 */
const NATIVE = fileURLToPath(new URL('../../native/', import.meta.url));
export const SCAN_SOURCE = path.join(NATIVE, 'scan-array.c');
const DRIVER_SOURCE = path.join(NATIVE, 'fuzz/driver.c');
const DRIVER = path.join(NATIVE, 'build/scan-fuzz');
/** Where an input that brought a report is kept, to be replayed. */
export const CRASHES = path.join(NATIVE, 'build/fuzz-crashes');

const CC = 'gcc';
const FLAGS = ['-O1', '-g', '-std=c11', '-Wall', '-Wextra', '-Werror', '-pthread', '-fsanitize=address,undefined', '-fno-sanitize-recover=all', '-fno-omit-frame-pointer'];

/** Builds the driver with `source` as the check (scan-array.c, or a changed copy of it); answers its path. */
export function buildFuzzDriver(source = SCAN_SOURCE): string {
  if (spawnSync(CC, ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`the C check's fuzz driver needs ${CC} (its AddressSanitizer and UBSan): install gcc`);
  }
  mkdirSync(path.dirname(DRIVER), { recursive: true });
  const built = spawnSync(CC, [...FLAGS, '-o', `${DRIVER}.new`, DRIVER_SOURCE, source], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`${CC} ${FLAGS.join(' ')} failed:\n${built.stderr}`);
  renameSync(`${DRIVER}.new`, DRIVER);
  return DRIVER;
}

/** The seed corpus in a new directory: the differential test's 20,000 bodies, and bodies at the nesting limit. */
export function writeSeedCorpus(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tablemere-scan-corpus-'));
  for (const { seed, body, mutant } of generatedBodies(10_000)) {
    writeFileSync(path.join(dir, `${seed}`), body);
    writeFileSync(path.join(dir, `${seed}-mutated`), mutant);
  }
  const nested = (levels: number) => `[{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}]`;
  writeFileSync(path.join(dir, 'nested-at-limit'), nested(SEND_NESTING_LIMIT));
  writeFileSync(path.join(dir, 'nested-past-limit'), nested(SEND_NESTING_LIMIT + 1));
  return dir;
}

export interface FuzzRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The driver's last line: runs, seconds, runs per second. */
  summary: { runs: number; seconds: number; perSecond: number } | undefined;
}

/** Runs the driver for `seconds` on a fresh seed corpus; stdout and stderr are also passed on to `echo` as they come. */
export async function runFuzz(options: { seconds: number; seed?: number; source?: string; echo?: (chunk: string) => void }): Promise<FuzzRun> {
  const driver = buildFuzzDriver(options.source);
  const corpus = writeSeedCorpus();
  mkdirSync(CRASHES, { recursive: true });
  const args = ['--seconds', String(options.seconds), '--nesting', String(SEND_NESTING_LIMIT), '--crashes', CRASHES];
  if (options.seed !== undefined) args.push('--seed', String(options.seed));
  try {
    const child = spawn(driver, [...args, corpus], { env: { ...process.env, ASAN_OPTIONS: 'abort_on_error=0:detect_leaks=1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      options.echo?.(chunk);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      options.echo?.(chunk);
    });
    const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (code, sig) => resolve([code, sig])));
    const line = /fuzz: (\d+) runs .* in ([\d.]+) s, (\d+) runs\/s/.exec(stdout);
    const summary = line ? { runs: Number(line[1]), seconds: Number(line[2]), perSecond: Number(line[3]) } : undefined;
    return { status, signal, stdout, stderr, summary };
  } finally {
    rmSync(corpus, { recursive: true, force: true });
  }
}
