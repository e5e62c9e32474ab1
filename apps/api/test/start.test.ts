import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createDatabase, defaultMigrationsDir, dropDatabase, readMigrations } from '@tablemere/db';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, stackEnv } from '../../../tests/support/stack.ts';
import { suffix } from './support/harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** A database of its own on the stack's Postgres, dropped after the file. */
async function freshDatabase(env: Record<string, string>): Promise<string> {
  const url = new URL(env.DATABASE_URL!);
  url.pathname = `/api_start_${suffix()}`;
  const databaseUrl = url.toString();
  await createDatabase(databaseUrl);
  cleanups.push(() => dropDatabase(databaseUrl));
  return databaseUrl;
}

/** What start.ts needs to serve from `databaseUrl` and the stack's store, on ports of its own. */
function apiEnv(env: Record<string, string>, databaseUrl: string, secretKey = randomBytes(32).toString('base64')): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    TABLEMERE_API_PORT: '0',
    TABLEMERE_INTERNAL_PORT: '0',
    TABLEMERE_SECRET_KEY: secretKey,
    TABLEMERE_BOOTSTRAP_SECRET: 'bootstrap-secret-for-test',
    AWS_ENDPOINT_URL: env.AWS_ENDPOINT_URL!,
    AWS_REGION: env.AWS_REGION!,
    AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID!,
    AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY!,
    TABLEMERE_INTAKE_BUCKET: env.TABLEMERE_INTAKE_BUCKET!,
  };
}

/** Runs start.ts as the stack does; `until` waits for a line of its log. */
function runApi(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'apps/api/src/start.ts')], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH!, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, any>> = [];
  let stderr = '';
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part));
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const until = async (predicate: (line: Record<string, any>) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = lines.find(predicate);
      if (found) return found;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no such line; stdout: ${JSON.stringify(lines)} stderr: ${stderr}`);
  };
  return { child, lines, exited, until, stderr: () => stderr };
}

describe('start.ts', () => {
  it('migrates, listens with one start-up line, serves, and stops cleanly on SIGTERM', async () => {
    const env = stackEnv();
    const databaseUrl = await freshDatabase(env);
    const secretKey = randomBytes(32).toString('base64');
    const api = runApi(apiEnv(env, databaseUrl, secretKey));
    const started = await api.until((line) => /listening/.test(line.msg));
    expect(api.lines, JSON.stringify(api.lines)).toHaveLength(1);
    expect(started).toMatchObject({
      database: `${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}`,
      store: env.AWS_ENDPOINT_URL,
      store_credentials: 'environment (AWS_ACCESS_KEY_ID)',
      // a fresh database gets every migration file
      migrations_applied: (await readMigrations(defaultMigrationsDir)).length,
      sinks_enabled: true,
    });
    const text = JSON.stringify(api.lines);
    for (const secret of [env.AWS_SECRET_ACCESS_KEY!, secretKey, 'bootstrap-secret-for-test', 'postgres:postgres']) {
      expect(text).not.toContain(secret);
    }

    const health = await fetch(`${started.address}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok' });
    // The roller's API answers on its own listener only, behind the bootstrap secret.
    expect(started.internal_address).not.toBe(started.address);
    const bearer = { authorization: 'Bearer bootstrap-secret-for-test' };
    const internal = await fetch(`${started.internal_address}/internal/sinks`, { headers: bearer });
    expect(internal.status).toBe(200);
    expect(await internal.json()).toMatchObject({ enabled: true, sinks: [] });
    expect((await fetch(`${started.internal_address}/internal/sinks`)).status).toBe(401);
    expect((await fetch(`${started.address}/internal/sinks`, { headers: bearer })).status).toBe(404);

    api.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(api.lines.some((line) => line.msg === 'stopping' && line.signal === 'SIGTERM')).toBe(true);
  });

  it('reads the deprecated AL_SINKS_ENABLED with one warning line at start; refuses it beside a TABLEMERE_SINKS_ENABLED that differs', async () => {
    const env = stackEnv();
    const databaseUrl = await freshDatabase(env);
    const base = apiEnv(env, databaseUrl);
    const api = runApi({ ...base, AL_SINKS_ENABLED: 'false' });
    const started = await api.until((line) => /listening/.test(line.msg));
    expect(started.sinks_enabled).toBe(false);
    expect(api.lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      'AL_SINKS_ENABLED is deprecated: rename it to TABLEMERE_SINKS_ENABLED (it is read only while TABLEMERE_SINKS_ENABLED is unset)',
    ]);
    api.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);

    const both = runApi({ ...base, AL_SINKS_ENABLED: 'false', TABLEMERE_SINKS_ENABLED: 'true' });
    expect(await both.exited).toBe(1);
    expect((await both.until((line) => line.level === 60)).problems).toEqual([
      'TABLEMERE_SINKS_ENABLED is true but the deprecated AL_SINKS_ENABLED is false: remove AL_SINKS_ENABLED (or make both the same)',
    ]);
  });

  it('refuses to start with a message per missing variable', async () => {
    const api = runApi({ TABLEMERE_API_PORT: '0', AWS_REGION: 'us-east-1' });
    expect(await api.exited).toBe(1);
    const fatal = await api.until((line) => line.level === 60);
    expect(fatal.problems).toEqual([
      'DATABASE_URL is not set',
      'TABLEMERE_SECRET_KEY is not set',
      'TABLEMERE_BOOTSTRAP_SECRET is not set',
      'TABLEMERE_INTAKE_BUCKET is not set',
    ]);
  });
});
