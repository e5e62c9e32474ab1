import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, sinksEnabledOf } from './config.ts';

const valid = {
  DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:5432/tablemere',
  TABLEMERE_SECRET_KEY: randomBytes(32).toString('base64'),
  TABLEMERE_BOOTSTRAP_SECRET: 'a-long-enough-secret',
  AWS_REGION: 'us-east-1',
  AWS_ENDPOINT_URL: 'http://127.0.0.1:8333',
  AWS_ACCESS_KEY_ID: 'admin',
  AWS_SECRET_ACCESS_KEY: 'adminsecret',
  TABLEMERE_INTAKE_BUCKET: 'tablemere-intake',
};

function problems(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('applies defaults and freezes the result', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:8787',
      sinksEnabled: true,
      store: { endpoint: 'http://127.0.0.1:8333', intakeBucket: 'tablemere-intake', credentials: { accessKeyId: 'admin' } },
      timeouts: { headersMs: 10_000, requestMs: 60_000, idleMs: 30_000, keepAliveMs: 65_000 },
      sendInFlight: { processBytes: 512 * 1024 * 1024, sinkBytes: 128 * 1024 * 1024 },
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.store)).toBe(true);
    expect(loadConfig({ ...valid, TABLEMERE_SINKS_ENABLED: 'false', TABLEMERE_PUBLIC_URL: 'https://api.example.com/' })).toMatchObject({
      sinksEnabled: false,
      publicUrl: 'https://api.example.com',
    });
  });

  it('names every missing variable', () => {
    expect(problems({})).toEqual([
      'DATABASE_URL is not set',
      'TABLEMERE_SECRET_KEY is not set',
      'TABLEMERE_BOOTSTRAP_SECRET is not set',
      'AWS_REGION is not set',
      'TABLEMERE_INTAKE_BUCKET is not set',
    ]);
  });

  it('says what is wrong with an invalid variable, never echoing its value', () => {
    const found = problems({
      ...valid,
      DATABASE_URL: 'mysql://x',
      TABLEMERE_SECRET_KEY: 'c2hvcnQ=',
      TABLEMERE_API_PORT: 'eighty',
      TABLEMERE_SINKS_ENABLED: 'maybe',
    });
    expect(found).toHaveLength(4);
    expect(found[0]).toMatch(/^DATABASE_URL must be a postgres:\/\/ URL/);
    expect(found.find((p) => p.startsWith('TABLEMERE_SECRET_KEY'))).toMatch(/32 random bytes in base64/);
    expect(found.join('\n')).not.toContain('c2hvcnQ=');
  });

  it('wants both AWS keys or neither, and treats empty as unset', () => {
    expect(problems({ ...valid, AWS_SECRET_ACCESS_KEY: undefined })).toEqual([
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together, or neither',
    ]);
    const { AWS_ACCESS_KEY_ID: _a, AWS_SECRET_ACCESS_KEY: _b, ...noKeys } = valid;
    expect(loadConfig({ ...noKeys, AWS_ENDPOINT_URL: '' }).store).toMatchObject({ endpoint: undefined, credentials: undefined });
  });
});

describe('the kill switch TABLEMERE_SINKS_ENABLED', () => {
  it('is on by default, off with false or 0, and warns of nothing', () => {
    expect(loadConfig(valid)).toMatchObject({ sinksEnabled: true, warnings: [] });
    expect(loadConfig({ ...valid, TABLEMERE_SINKS_ENABLED: '0' })).toMatchObject({ sinksEnabled: false, warnings: [] });
  });

  it('still reads the deprecated AL_SINKS_ENABLED while it is unset, with one warning', () => {
    const config = loadConfig({ ...valid, AL_SINKS_ENABLED: 'false' });
    expect(config.sinksEnabled).toBe(false);
    expect(config.warnings).toEqual(['AL_SINKS_ENABLED is deprecated: rename it to TABLEMERE_SINKS_ENABLED (it is read only while TABLEMERE_SINKS_ENABLED is unset)']);
    // Both saying the same thing: the new one rules, and the old one is named for removal.
    expect(loadConfig({ ...valid, AL_SINKS_ENABLED: '1', TABLEMERE_SINKS_ENABLED: 'true' })).toMatchObject({
      sinksEnabled: true,
      warnings: ['AL_SINKS_ENABLED is deprecated and ignored beside TABLEMERE_SINKS_ENABLED: remove it'],
    });
  });

  it('refuses to start when both are set and differ', () => {
    expect(problems({ ...valid, AL_SINKS_ENABLED: 'true', TABLEMERE_SINKS_ENABLED: 'false' })).toEqual([
      'TABLEMERE_SINKS_ENABLED is false but the deprecated AL_SINKS_ENABLED is true: remove AL_SINKS_ENABLED (or make both the same)',
    ]);
    expect(sinksEnabledOf(true, false)).toHaveProperty('problem');
    expect(problems({ ...valid, AL_SINKS_ENABLED: 'maybe' })).toEqual([expect.stringMatching(/^AL_SINKS_ENABLED /)]);
  });
});

describe('the public URL', () => {
  it('is required once the API listens beyond the loopback, and never an unspecified address', () => {
    expect(problems({ ...valid, TABLEMERE_API_HOST: '0.0.0.0' })).toEqual([
      'TABLEMERE_PUBLIC_URL is not set while TABLEMERE_API_HOST is 0.0.0.0: set it to the address clients use (the load balancer\'s)',
    ]);
    expect(problems({ ...valid, TABLEMERE_API_HOST: '10.0.0.5' })).toHaveLength(1);
    expect(problems({ ...valid, TABLEMERE_PUBLIC_URL: 'http://0.0.0.0:8787' })).toEqual([
      'TABLEMERE_PUBLIC_URL names an unspecified address (0.0.0.0 or ::): set it to the address clients use',
    ]);
    expect(problems({ ...valid, TABLEMERE_PUBLIC_URL: 'http://[::]:8787' })).toHaveLength(1);
    expect(loadConfig({ ...valid, TABLEMERE_API_HOST: '0.0.0.0', TABLEMERE_PUBLIC_URL: 'https://ingest.example.com' }).publicUrl).toBe('https://ingest.example.com');
    for (const host of ['127.0.0.1', 'localhost', '::1']) expect(problems({ ...valid, TABLEMERE_API_HOST: host }), host).toEqual([]);
  });
});

describe('the database bound', () => {
  it('is 5 s by default and read from TABLEMERE_DB_TIMEOUT_MS', () => {
    expect(loadConfig(valid).dbTimeoutMs).toBe(5_000);
    expect(loadConfig(valid).dbPoolSize).toBe(10);
    expect(loadConfig({ ...valid, TABLEMERE_DB_POOL_SIZE: '40' }).dbPoolSize).toBe(40);
    expect(loadConfig({ ...valid, TABLEMERE_DB_TIMEOUT_MS: '2500' }).dbTimeoutMs).toBe(2500);
    expect(problems({ ...valid, TABLEMERE_DB_TIMEOUT_MS: '5' })).toHaveLength(1);
  });

  it('has a twin for the object store, 10 s by default', () => {
    expect(loadConfig(valid).storeTimeoutMs).toBe(10_000);
    expect(loadConfig({ ...valid, TABLEMERE_STORE_TIMEOUT_MS: '4000' }).storeTimeoutMs).toBe(4000);
  });
});

describe('the limits against slow clients', () => {
  it('are read from the environment and refused when not a positive whole number', () => {
    const config = loadConfig({ ...valid, TABLEMERE_HEADERS_TIMEOUT_MS: '2000', TABLEMERE_IDLE_TIMEOUT_MS: '5000', TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT_PER_SINK: '1048576' });
    expect(config.timeouts).toMatchObject({ headersMs: 2_000, idleMs: 5_000 });
    expect(config.sendInFlight.sinkBytes).toBe(1_048_576);
    expect(problems({ ...valid, TABLEMERE_REQUEST_TIMEOUT_MS: '0', TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT: 'lots' })).toEqual([
      expect.stringMatching(/^TABLEMERE_REQUEST_TIMEOUT_MS /),
      expect.stringMatching(/^TABLEMERE_SEND_MAX_BYTES_IN_FLIGHT /),
    ]);
  });
});
