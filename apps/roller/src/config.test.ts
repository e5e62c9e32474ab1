import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

const base = { TABLEMERE_BOOTSTRAP_SECRET: 's3cret' };

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      http: { host: '127.0.0.1', port: 8788 },
      api: { url: 'http://127.0.0.1:8789', secret: 's3cret' },
      store: { endpoint: undefined, region: 'us-east-1', credentials: undefined },
      tickSeconds: 10,
      concurrency: 4,
      leaseSeconds: 60,
      callTimeoutMs: 10_000,
      surveySeconds: 60,
      shutdownSeconds: 30,
      rejectsRetentionSeconds: 604800,
      sweepSeconds: 3600,
      crashAt: undefined,
    });
    expect(config.rollerId).toMatch(/:\d+$/);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes the internal URL, or builds it from the port', () => {
    expect(loadConfig({ ...base, TABLEMERE_INTERNAL_PORT: '9999' }).api.url).toBe('http://127.0.0.1:9999');
    expect(loadConfig({ ...base, TABLEMERE_INTERNAL_URL: 'http://api.internal:8789/' }).api.url).toBe('http://api.internal:8789');
  });

  it('takes store credentials together only', () => {
    expect(loadConfig({ ...base, AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' }).store.credentials).toEqual({ accessKeyId: 'a', secretAccessKey: 'b' });
    expect(() => loadConfig({ ...base, AWS_ACCESS_KEY_ID: 'a' })).toThrow(/AWS_SECRET_ACCESS_KEY/);
  });

  it('names every problem at once', () => {
    try {
      loadConfig({ TABLEMERE_ROLLER_CONCURRENCY: '0', TABLEMERE_ROLLER_CRASH_AT: 'sometime' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toContain('TABLEMERE_BOOTSTRAP_SECRET');
      expect(problems).toContain('TABLEMERE_ROLLER_CONCURRENCY');
      expect(problems).toContain('TABLEMERE_ROLLER_CRASH_AT');
    }
  });

  it('keeps orphan files 3 days by default and never under a day', () => {
    expect(loadConfig(base).upkeep.orphanAgeMs).toBe(3 * 86_400_000);
    expect(loadConfig({ ...base, TABLEMERE_ROLLER_UPKEEP_ORPHAN_AGE_SECONDS: '86400' }).upkeep.orphanAgeMs).toBe(86_400_000);
    expect(() => loadConfig({ ...base, TABLEMERE_ROLLER_UPKEEP_ORPHAN_AGE_SECONDS: '3600' })).toThrow(/ORPHAN_AGE_SECONDS: at least 86400/);
  });

  it('refuses the retired snapshot knobs, naming the per-sink settings', () => {
    expect(() => loadConfig({ ...base, TABLEMERE_ROLLER_UPKEEP_KEEP_SNAPSHOTS: '5' })).toThrow(/KEEP_SNAPSHOTS: is no longer read: set keep_snapshots on each sink/);
    expect(() => loadConfig({ ...base, TABLEMERE_ROLLER_UPKEEP_MIN_SNAPSHOT_AGE_SECONDS: '0' })).toThrow(/min_snapshot_age_seconds/);
  });
});
