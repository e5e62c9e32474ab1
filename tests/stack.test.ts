import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startStack, stackPaths } from '../scripts/stack/index.ts';
import { busyPorts, stackPorts } from '../scripts/stack/ports.ts';
import { isAlive } from '../scripts/stack/process.ts';
import { readState } from '../scripts/stack/state.ts';
import { parseEnvFile, repoRoot, stackEnv, stackEnvFile } from './support/stack.ts';

/** Every variable docs/development.md promises in `.stack/env`. */
const DOCUMENTED = [
  'TABLEMERE_API_URL',
  'TABLEMERE_API_KEY',
  'TABLEMERE_WAREHOUSE',
  'DATABASE_URL',
  'AWS_ENDPOINT_URL',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_REGION',
  'ICEBERG_REST_URI',
  'ICEBERG_WAREHOUSE',
  'TABLEMERE_INTAKE_BUCKET',
  'TABLEMERE_BOOTSTRAP_SECRET',
  'TABLEMERE_ROLLER_URL',
  'TABLEMERE_INTERNAL_URL',
];

async function waitFor(check: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the running local stack', () => {
  it('writes every documented variable to .stack/env, mode 0600', () => {
    const env = stackEnv();
    for (const name of DOCUMENTED) expect(env[name], name).toBeTruthy();
    expect(statSync(stackEnvFile).mode & 0o777).toBe(0o600);
  });

  it('answers on every endpoint the env file names', async () => {
    const env = stackEnv();
    expect((await fetch(`${env.TABLEMERE_API_URL}/healthz`)).status).toBe(200);
    expect((await fetch(`${env.TABLEMERE_ROLLER_URL}/healthz`)).status).toBe(200);
    expect((await fetch(`${env.AWS_ENDPOINT_URL}/healthz`)).status).toBe(200);
    const config = (await (await fetch(`${env.ICEBERG_REST_URI}/v1/config?warehouse=${env.ICEBERG_WAREHOUSE}`)).json()) as {
      overrides: { prefix: string };
    };
    expect(`s3://${config.overrides.prefix}`).toBe(env.ICEBERG_WAREHOUSE);
  });

  it('lets PyIceberg reach the catalog configured only from the env file', () => {
    const script = `source ${JSON.stringify(stackEnvFile)} && .venv/bin/python -c 'import os; from pyiceberg.catalog import load_catalog; c = load_catalog(os.environ["TABLEMERE_WAREHOUSE"]); print("props", c.properties["uri"] == os.environ["ICEBERG_REST_URI"], type(c.list_namespaces()).__name__)'`;
    const out = spawnSync('bash', ['--noprofile', '--norc', '-c', script], { cwd: repoRoot, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe('props True list');
  });

  it('refuses to start a second stack over the running one', async () => {
    await expect(startStack({ root: repoRoot, dir: process.env.TABLEMERE_STACK_DIR })).rejects.toThrow(/already running/);
  });
});

/** A port offset whose ports are all free, so a stack running beside this test is left alone. */
async function freeOffset(candidates: number[]): Promise<number> {
  for (const candidate of candidates) {
    if ((await busyPorts(stackPorts(candidate))).length === 0) return candidate;
  }
  throw new Error('no free port offset for a second stack');
}

/** A directory for a second stack's state, data and logs. */
function stackDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tablemere-stack-'));
  chmodSync(dir, 0o755); // Postgres runs as its own user and must reach its data dir
  return dir;
}

describe('npm start', () => {
  it('stops every process on SIGINT and starts again afterwards', async () => {
    const offset = await freeOffset([3000, 3700, 4400, 6100, 6800, 7500]);
    const dir = stackDir();

    const paths = stackPaths(repoRoot, dir);
    for (let round = 1; round <= 2; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
        cwd: repoRoot,
        env: { ...process.env, DATABASE_URL: '', TABLEMERE_STACK_DIR: dir, TABLEMERE_STACK_PORT_OFFSET: String(offset) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      // The env file is written just before the quickstart is printed, which reaches us later.
      const started = () => existsSync(paths.envFile) && output.includes('Ctrl-C stops everything');
      await waitFor(() => started() || child.exitCode !== null, 120_000, `stack start (round ${round})`).catch((e) => {
        child.kill('SIGKILL');
        throw new Error(`${e.message}\n${output}`);
      });
      expect(child.exitCode, output).toBeNull();
      expect(output).toContain('tablemere sink create');
      const env = parseEnvFile(readFileSync(paths.envFile, 'utf8'));
      expect(env.TABLEMERE_API_URL).toBe(`http://127.0.0.1:${stackPorts(offset).api}`);
      const pids = readState(paths.stateFile)!.pids;
      expect(pids.length).toBeGreaterThanOrEqual(4);
      expect(pids.every(isAlive)).toBe(true);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(output, 'a stopped process is not reported as dying').not.toContain(' exited (');
      await waitFor(() => !pids.some(isAlive), 15_000, 'every stack process to end');
      expect(existsSync(paths.envFile)).toBe(false);
      expect(existsSync(paths.stateFile)).toBe(false);
    }
  }, 300_000);
});

describe("the local stack's API and roller", () => {
  it('are started again when they die, with which one and why said, and the last lines of its log', async () => {
    const offset = await freeOffset([8200, 8900, 9600, 10300]);
    const lines: string[] = [];
    const stack = await startStack({ root: repoRoot, dir: stackDir(), portOffset: offset, databaseUrl: undefined, say: (line) => lines.push(line) });
    try {
      for (const [name, health] of [
        ['api', `${stack.env.TABLEMERE_API_URL}/healthz`],
        ['roller', `${stack.env.TABLEMERE_ROLLER_URL}/healthz`],
      ] as const) {
        const before = stack.pid(name)!;
        process.kill(before, 'SIGKILL');
        await waitFor(() => lines.some((line) => line.startsWith(`${name} restarted`)), 20_000, `${name} to restart`);
        const exited = lines.find((line) => line.startsWith(`${name} exited`))!;
        expect(exited).toContain('(SIGKILL)');
        expect(exited).toContain(`logs/${name}.log`);
        expect(exited.split('\n').length).toBeGreaterThan(1); // the log's last lines follow
        expect(lines).toContain(`restarting ${name} in 1 s`);
        const after = stack.pid(name)!;
        expect(after).not.toBe(before);
        let healthy = false;
        for (let i = 0; i < 60 && !healthy; i++) {
          healthy = await fetch(health).then((r) => r.ok, () => false);
          if (!healthy) await new Promise((r) => setTimeout(r, 500));
        }
        expect(healthy, `${name} healthz after its restart`).toBe(true);
      }
    } finally {
      await stack.stop();
    }
  }, 180_000);
});
