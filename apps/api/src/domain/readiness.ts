import { HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readiness, ReadinessCheck } from '@tablemere/contracts';
import { isIcebergError } from '@tablemere/iceberg';
import type { Pool } from '@tablemere/db';
import type { FastifyBaseLogger } from 'fastify';
import { connectCatalog } from './catalogs.ts';
import type { SecretBox } from './secrets.ts';
import { openFirstWarehouse } from './warehouses.ts';

export interface ReadinessDeps {
  pool: Pool;
  s3: S3Client;
  intakeBucket: string;
  secrets: SecretBox;
  timeoutMs: number;
}

type Reason = NonNullable<ReadinessCheck['reason']>;

class CheckFailed extends Error {
  constructor(readonly reason: Reason, options?: { cause?: unknown }) {
    super(reason, options);
  }
}

/** Runs `probe` under a deadline; `skip` means there was nothing to check. */
async function timed(
  name: string,
  log: FastifyBaseLogger,
  timeoutMs: number,
  probe: (signal: AbortSignal) => Promise<'ok' | 'skip'>,
  classify: (error: unknown) => Reason,
): Promise<ReadinessCheck> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new CheckFailed('timeout'));
    }, timeoutMs);
  });
  try {
    const outcome = await Promise.race([probe(controller.signal), deadline]);
    const duration_ms = Math.round(performance.now() - started);
    return outcome === 'ok' ? { status: 'ok', duration_ms } : { status: 'skipped', duration_ms, reason: 'no_warehouse' };
  } catch (error) {
    const reason = error instanceof CheckFailed ? error.reason : classify(error);
    log.warn({ check: name, reason, err: error }, 'readiness check failed');
    return { status: 'failed', duration_ms: Math.round(performance.now() - started), reason };
  } finally {
    clearTimeout(timer);
  }
}

/** An S3 error without an HTTP status never reached the store. */
function storeReason(error: unknown): Reason {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined ? 'unreachable' : 'error';
}

/**
 * Checks each dependency in parallel, each under its own deadline: Postgres (`select 1`),
 * the intake bucket (HeadBucket) and the first registered warehouse's catalog (`/v1/config`,
 * authenticated as the warehouse). Ready only when none failed.
 */
export async function checkReadiness(deps: ReadinessDeps, log: FastifyBaseLogger): Promise<Readiness> {
  const [postgres, store, catalog] = await Promise.all([
    timed('postgres', log, deps.timeoutMs, async () => {
      await deps.pool.query('SELECT 1');
      return 'ok';
    }, () => 'unreachable'),
    timed('store', log, deps.timeoutMs, async (abortSignal) => {
      await deps.s3.send(new HeadBucketCommand({ Bucket: deps.intakeBucket }), { abortSignal });
      return 'ok';
    }, storeReason),
    timed('catalog', log, deps.timeoutMs, async () => {
      const warehouse = await openFirstWarehouse(deps.pool, deps.secrets);
      if (!warehouse) return 'skip';
      await connectCatalog(warehouse, deps.timeoutMs);
      return 'ok';
    }, (error) => (isIcebergError(error, 'unavailable') ? 'unreachable' : 'error')),
  ]);
  const ready = [postgres, store, catalog].every((check) => check.status !== 'failed');
  return { status: ready ? 'ok' : 'unavailable', checks: { postgres, store, catalog } };
}
