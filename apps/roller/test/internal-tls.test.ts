import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from '../../../scripts/bench/api-process.ts';
import { freePort } from '../../../tests/support/ports.ts';
import { repoRoot } from '../../../tests/support/stack.ts';
import { createSink, createTable, getSink, send } from './support/api.ts';
import { readBoth } from './support/expect.ts';
import { addressOf, collect, logLines, runCli, startRoller, waitFor, type RunningRoller } from './support/roller.ts';
import { startTestStack, suffix, type TestStack } from './support/stack.ts';
import { makeCertificates, type TestCertificates } from './support/tls.ts';

/**
 * Secrets in transit (issue 35): the API's internal listener over TLS with a certificate of a
 * private CA, a roller that trusts that CA and one that does not, plain HTTP to the TLS port,
 * start-up errors for files that cannot be used, and /metrics of both processes behind
 * TABLEMERE_METRICS_TOKEN.
 */
let stack: TestStack;
let dir: string;
let certs: TestCertificates;
let api: Server;
let internalPort: number;
const metricsToken = `metrics-${randomBytes(16).toString('hex')}`;
const namespaces: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tablemere-tls-'));
  [stack, certs] = await Promise.all([startTestStack(), makeCertificates(dir)]);
  internalPort = await freePort();
  // The real API process (start.ts) on the test database, its internal listener on TLS.
  api = await stack.apiProcess(`internal-tls-${suffix()}`, {
    TABLEMERE_INTERNAL_PORT: String(internalPort),
    TABLEMERE_BOOTSTRAP_SECRET: stack.bootstrapSecret,
    TABLEMERE_INTERNAL_TLS_CERT_FILE: certs.certFile,
    TABLEMERE_INTERNAL_TLS_KEY_FILE: certs.keyFile,
    TABLEMERE_METRICS_TOKEN: metricsToken,
  });
}, 60_000);

afterAll(async () => {
  if (api && api.child.exitCode === null) {
    const exited = new Promise((resolve) => api.child.once('exit', resolve));
    api.child.kill('SIGTERM');
    await exited;
  }
  await stack?.dropNamespaces(namespaces);
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const tlsUrl = (host = '127.0.0.1') => `https://${host}:${internalPort}`;

async function newSink(): Promise<{ ns: string; sink: Awaited<ReturnType<typeof createSink>> }> {
  const ns = `tls_${suffix()}`;
  namespaces.push(ns);
  await createTable(stack, ns, 'events', [{ name: 'x', type: 'long', required: true }]);
  return { ns, sink: await createSink(stack, `tls_${suffix()}`, `${ns}.events`, { inactivity_seconds: 10 }) };
}

async function stop(roller: RunningRoller) {
  roller.child.kill('SIGTERM');
  return roller.finished;
}

/** GET `url` with an optional Authorization header: the status and the WWW-Authenticate header. */
async function get(url: string, authorization?: string): Promise<{ status: number; challenge: string | null; text: string }> {
  const res = await fetch(url, authorization === undefined ? {} : { headers: { authorization } });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), text: await res.text() };
}

/** /metrics at `base`: 401 without the token and with a wrong one, 200 with it. */
async function expectMetricsBehindToken(base: string, series: string): Promise<void> {
  for (const authorization of [undefined, `Bearer ${metricsToken}x`, `Bearer wrong-token-of-some-length`, metricsToken, `Basic ${metricsToken}`]) {
    const answer = await get(`${base}/metrics`, authorization);
    expect(answer.status, `Authorization: ${authorization ?? '(none)'}`).toBe(401);
    expect(answer.challenge).toBe('Bearer realm="metrics"');
    expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'unauthorized' } });
    expect(answer.text).not.toContain(metricsToken);
  }
  const ok = await get(`${base}/metrics`, `Bearer ${metricsToken}`);
  expect(ok.status).toBe(200);
  expect(ok.text).toContain(`# TYPE ${series} `);
}

describe('the internal listener over TLS', () => {
  it('a roller that trusts the private CA rolls a sink end to end; its /metrics and the API\'s need the token', async () => {
    const { ns, sink } = await newSink();
    await send(stack, sink, 'one', [{ x: 1 }, { x: 2 }]);
    await send(stack, sink, 'two', [{ x: 3 }]);
    const roller = startRoller(
      stack.rollerEnv({
        TABLEMERE_INTERNAL_URL: tlsUrl(),
        TABLEMERE_INTERNAL_CA_FILE: certs.caFile,
        TABLEMERE_METRICS_TOKEN: metricsToken,
        TABLEMERE_ROLLER_TICK_SECONDS: '1',
      }),
    );
    try {
      const address = await addressOf(roller);
      expect(logLines(roller.output()).find((l) => l.internal_api)).toMatchObject({ internal_api: tlsUrl(), internal_ca: 'TABLEMERE_INTERNAL_CA_FILE', metrics_token: true });
      await waitFor('the roll over TLS', async () => (await getSink(stack, sink.id)).lag.batches_waiting === 0, 45_000);
      expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([1, 2, 3]);
      await expectMetricsBehindToken(address, 'tablemere_roller_rolls_total');
      await expectMetricsBehindToken(api.url, 'tablemere_intake_requests_total');
      // /healthz stays open: a probe needs no token.
      expect((await get(`${address}/healthz`)).status).toBe(200);
      expect((await get(`${api.url}/healthz`)).status).toBe(200);
    } finally {
      expect((await stop(roller)).code).toBe(0);
    }
    const output = roller.output();
    expect(output).not.toContain(metricsToken);
    expect(output).not.toContain(stack.bootstrapSecret);
    expect(output).not.toContain('certificate');
    expect(output).not.toContain('plain http');
    // The API said at start that its internal listener is TLS, without the files' content.
    const apiLog = readFileSync(api.logFile, 'utf8');
    const started = logLines(apiLog)
      .filter((l) => typeof l.internal_address === 'string' && l.internal_address.includes(String(internalPort)))
      .at(-1);
    expect(started).toMatchObject({ internal_address: `https://127.0.0.1:${internalPort}`, internal_tls: true, metrics_token: true });
    expect(apiLog).not.toContain(readFileSync(certs.keyFile, 'utf8').split('\n')[1]!);
    expect(apiLog).not.toContain(metricsToken);
  }, 60_000);

  it('the operator command reaches it by name (localhost) with the CA too', async () => {
    const { ns, sink } = await newSink();
    await send(stack, sink, 'one', [{ x: 10 }]);
    const run = await runCli(['roll', sink.id], stack.rollerEnv({ TABLEMERE_INTERNAL_URL: tlsUrl('localhost'), TABLEMERE_INTERNAL_CA_FILE: certs.caFile }));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'committed', rows: 1 });
    expect((await readBoth(stack, ns, 'events')).map((r) => r.x)).toEqual([10]);
  }, 60_000);

  it('a roller that does not trust the CA refuses the certificate, says so, and rolls nothing', async () => {
    const { sink } = await newSink();
    await send(stack, sink, 'one', [{ x: 1 }]);

    // The operator command: one clear error, no retries, a failing exit.
    for (const extra of [{}, { TABLEMERE_INTERNAL_CA_FILE: certs.otherCaFile }] as Array<Record<string, string>>) {
      const started = Date.now();
      const run = await runCli(['roll', sink.id], stack.rollerEnv({ TABLEMERE_INTERNAL_URL: tlsUrl(), ...extra }));
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/the internal API's TLS certificate at https:\/\/127\.0\.0\.1:\d+ was refused \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)/);
      expect(run.stderr).toContain('TABLEMERE_INTERNAL_CA_FILE');
      expect(run.stderr).not.toContain(stack.bootstrapSecret);
      expect(Date.now() - started).toBeLessThan(15_000);
    }

    // The service: a warning per tick naming the certificate problem; the sink keeps its batch.
    const roller = startRoller(stack.rollerEnv({ TABLEMERE_INTERNAL_URL: tlsUrl(), TABLEMERE_ROLLER_TICK_SECONDS: '1' }));
    try {
      await waitFor('two refused ticks', async () => logLines(roller.output()).filter((l) => l.msg === 'tick failed; trying again next tick').length >= 2, 30_000);
      const failed = logLines(roller.output()).find((l) => l.msg === 'tick failed; trying again next tick') as { err: { kind: string; message: string } };
      expect(failed.err.kind).toBe('certificate');
      expect(failed.err.message).toContain('set TABLEMERE_INTERNAL_CA_FILE to the CA that signed it');
    } finally {
      expect((await stop(roller)).code).toBe(0);
    }
    expect(logLines(roller.output()).some((l) => l.outcome === 'committed')).toBe(false);
    expect((await getSink(stack, sink.id)).lag.batches_waiting).toBe(1);
  }, 60_000);

  it('plain HTTP to the TLS port gets no answer', async () => {
    await expect(fetch(`http://127.0.0.1:${internalPort}/internal/sinks`, { headers: { authorization: `Bearer ${stack.bootstrapSecret}` }, signal: AbortSignal.timeout(5_000) })).rejects.toThrow();
    const run = await runCli(['roll', '--all-due'], stack.rollerEnv({ TABLEMERE_INTERNAL_URL: `http://127.0.0.1:${internalPort}` }));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`no answer from the internal API at http://127.0.0.1:${internalPort}`);
    // And a TLS client to the stack's own plain listener is refused too, not downgraded.
    const plain = await runCli(['roll', '--all-due'], stack.rollerEnv({ TABLEMERE_INTERNAL_URL: stack.internalUrl.replace('http:', 'https:'), TABLEMERE_INTERNAL_CA_FILE: certs.caFile }));
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toContain('no answer from the internal API at https://');
  }, 60_000);
});

describe('files that cannot be used stop a process at start, with a clear error', () => {
  it('the roller: a CA file missing, not a certificate, or for a plain http:// URL', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ TABLEMERE_INTERNAL_URL: tlsUrl(), TABLEMERE_INTERNAL_CA_FILE: path.join(dir, 'missing.pem') }, /TABLEMERE_INTERNAL_CA_FILE: \S+missing\.pem cannot be read \(ENOENT\)/],
      [{ TABLEMERE_INTERNAL_URL: tlsUrl(), TABLEMERE_INTERNAL_CA_FILE: certs.keyFile }, /TABLEMERE_INTERNAL_CA_FILE: \S+server\.key is not a PEM certificate/],
      [{ TABLEMERE_INTERNAL_URL: stack.internalUrl, TABLEMERE_INTERNAL_CA_FILE: certs.caFile }, /TABLEMERE_INTERNAL_CA_FILE: is set but the internal API URL \(http:\/\/127\.0\.0\.1:\d+\) is plain http:\/\//],
      [{ TABLEMERE_METRICS_TOKEN: 'short' }, /TABLEMERE_METRICS_TOKEN: must be at least 16 printable characters without spaces/],
    ];
    for (const [extra, message] of cases) {
      const run = await runCli(['roll', '--all-due'], stack.rollerEnv(extra));
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toContain('PRIVATE KEY');
    }
    // The service exits with the same message as its one log line.
    const roller = startRoller(stack.rollerEnv({ TABLEMERE_INTERNAL_URL: tlsUrl(), TABLEMERE_INTERNAL_CA_FILE: path.join(dir, 'missing.pem') }));
    const finished = await roller.finished;
    expect(finished.code).toBe(1);
    expect(logLines(finished.stdout)[0]).toMatchObject({ level: expect.anything(), msg: expect.stringMatching(/TABLEMERE_INTERNAL_CA_FILE: \S+ cannot be read \(ENOENT\)/) });
  }, 60_000);

  it('the API: a certificate or key missing, one without the other, or a key that is not the certificate\'s', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ TABLEMERE_INTERNAL_TLS_CERT_FILE: path.join(dir, 'missing.pem'), TABLEMERE_INTERNAL_TLS_KEY_FILE: certs.keyFile }, /TABLEMERE_INTERNAL_TLS_CERT_FILE names \S+missing\.pem, which cannot be read \(ENOENT\)/],
      [{ TABLEMERE_INTERNAL_TLS_CERT_FILE: certs.certFile, TABLEMERE_INTERNAL_TLS_KEY_FILE: dir }, /TABLEMERE_INTERNAL_TLS_KEY_FILE names \S+, which cannot be read \(EISDIR\)/],
      [{ TABLEMERE_INTERNAL_TLS_CERT_FILE: certs.certFile }, /TABLEMERE_INTERNAL_TLS_CERT_FILE and TABLEMERE_INTERNAL_TLS_KEY_FILE must be set together/],
      [{ TABLEMERE_INTERNAL_TLS_CERT_FILE: certs.caFile, TABLEMERE_INTERNAL_TLS_KEY_FILE: certs.keyFile }, /are not a PEM certificate and its private key: .*key values mismatch/],
      [{ TABLEMERE_METRICS_TOKEN: 'has a space in it somewhere' }, /TABLEMERE_METRICS_TOKEN must be at least 16 printable characters without spaces/],
    ];
    const key = readFileSync(certs.keyFile, 'utf8').split('\n')[1]!;
    for (const [extra, message] of cases) {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'apps/api/src/start.ts')], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: stack.env.DATABASE_URL!,
          TABLEMERE_SECRET_KEY: randomBytes(32).toString('base64'),
          TABLEMERE_BOOTSTRAP_SECRET: stack.bootstrapSecret,
          AWS_REGION: 'us-east-1',
          TABLEMERE_INTAKE_BUCKET: stack.env.TABLEMERE_INTAKE_BUCKET!,
          TABLEMERE_API_PORT: '0',
          TABLEMERE_INTERNAL_PORT: '0',
          ...extra,
        },
      });
      const run = await collect(child);
      const output = run.stdout + run.stderr;
      expect(run.code, output).toBe(1);
      expect(output).toMatch(message);
      expect(output).not.toContain(key);
      expect(output).not.toContain(stack.bootstrapSecret);
    }
  }, 60_000);
});
