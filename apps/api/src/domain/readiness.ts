import { HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readiness, ReadinessCheck, WarehouseHealth } from '@tablemere/contracts';
import { isIcebergError, mapBounded } from '@tablemere/iceberg';
import type { Pool } from '@tablemere/db';
import type { FastifyBaseLogger } from 'fastify';
import { connectCatalog } from './catalogs.ts';
import type { SecretBox } from './secrets.ts';
import { openWarehouses } from './warehouses.ts';

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

/** Warehouses' catalogs checked at once; the rest wait their turn within the same request. */
const CATALOG_CHECKS_AT_ONCE = 8;
/** Catalog results are reused this long: a load balancer polling every few seconds must not poll every catalog as often. */
const CATALOG_RESULTS_FOR_MS = 15_000;

/** Runs `probe` under a deadline. */
async function timed(
  name: string,
  log: FastifyBaseLogger,
  timeoutMs: number,
  probe: (signal: AbortSignal) => Promise<void>,
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
    await Promise.race([probe(controller.signal), deadline]);
    return { status: 'ok', duration_ms: Math.round(performance.now() - started) };
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

/** Each registered warehouse's catalog (`/v1/config`, authenticated as the warehouse), a few at a time. */
async function checkCatalogs(deps: ReadinessDeps, log: FastifyBaseLogger): Promise<WarehouseHealth[]> {
  const warehouses = await openWarehouses(deps.pool, deps.secrets);
  return mapBounded(warehouses, { width: CATALOG_CHECKS_AT_ONCE }, async (warehouse) => {
    const check = await timed(`catalog ${warehouse.id}`, log, deps.timeoutMs, () => connectCatalog(warehouse, deps.timeoutMs).then(() => undefined), (error) =>
      isIcebergError(error, 'unavailable') ? 'unreachable' : 'error',
    );
    return { id: warehouse.id, ...check };
  });
}

/**
 * A readiness check that remembers its catalog results for a while (one per API process):
 * Postgres and the store are checked on every call, the catalogs at most every 15 s.
 */
export function readinessChecker(deps: ReadinessDeps): (log: FastifyBaseLogger) => Promise<Readiness> {
  let catalogs: { at: number; results: Promise<WarehouseHealth[]> } | undefined;
  return async (log) => {
    const [postgres, store] = await Promise.all([
      timed('postgres', log, deps.timeoutMs, async () => {
        await deps.pool.query('SELECT 1');
      }, () => 'unreachable'),
      timed('store', log, deps.timeoutMs, async (abortSignal) => {
        await deps.s3.send(new HeadBucketCommand({ Bucket: deps.intakeBucket }), { abortSignal });
      }, storeReason),
    ]);
    let warehouses: WarehouseHealth[] = [];
    if (postgres.status === 'ok') {
      if (catalogs === undefined || Date.now() - catalogs.at > CATALOG_RESULTS_FOR_MS) catalogs = { at: Date.now(), results: checkCatalogs(deps, log) };
      const pending = catalogs;
      // A failed listing is not remembered: the next call tries again.
      warehouses = await pending.results.catch(() => {
        if (catalogs === pending) catalogs = undefined;
        return [];
      });
    }
    const ready = postgres.status === 'ok' && store.status === 'ok';
    return { status: ready ? 'ok' : 'unavailable', checks: { postgres, store }, warehouses };
  };
}
