import { SEND_BODY_LIMIT } from '@tablemere/contracts';
import { ObjectStore } from '@tablemere/store';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../../deps.ts';
import { Aftercare } from '../../domain/intake/aftercare.ts';
import { BacklogGauge } from '../../domain/intake/backlog.ts';
import { Claims } from '../../domain/intake/claim.ts';
import { InFlight } from '../../domain/intake/in-flight.ts';
import { IntakeStores } from '../../domain/intake/stores.ts';
import { SegmentWriter } from '../../domain/intake/segments.ts';
import { LedgerWrites } from '../../domain/intake/writes.ts';
import { SendKeyCache } from '../../domain/sinks/send-keys.ts';
import { apiKeyScope } from '../../http/auth.ts';
import { BodyPool } from '../../http/body-pool.ts';
import { statusRoutes } from '../status/index.ts';
import { getBatch } from './batch.ts';
import type { SinkRouteDeps } from './context.ts';
import { createSink } from './create.ts';
import { deleteSink } from './delete.ts';
import { getSink } from './get.ts';
import { listSinks } from './list.ts';
import { getSinkRejects } from './rejects.ts';
import { rotateSendKey } from './rotate-key.ts';
import { sendBatch } from './send.ts';
import { getSinkPending } from './tail.ts';
import { updateSink } from './update.ts';

/** Idle 16 MiB slabs kept for large bodies: 64 MiB held at most, and none 10 s after the last large body. */
const BODY_SLABS_KEPT = 4;
/** Bodies from this size on are read into a slab. */
const LARGE_BODY_BYTES = 1024 * 1024;

/**
 * Every /v1/sinks route, and the status page over them. With sinks disabled
 * (TABLEMERE_SINKS_ENABLED=false) none is registered, so each answers 404 not_found like any unknown route.
 */
export function sinkRoutes(app: FastifyInstance, deps: RouteDeps): void {
  if (!deps.sinksEnabled) return;
  const ledgerWrites = new LedgerWrites(deps.pool);
  const aftercare = new Aftercare(app.log);
  const sinkDeps: SinkRouteDeps = {
    ...deps,
    intakes: new IntakeStores(deps.pool, deps.secrets, new ObjectStore(deps.s3, deps.intakeBucket), deps.storeTimeoutMs),
    backlog: new BacklogGauge(deps.pool, deps.sinkBacklog),
    sendKeys: new SendKeyCache(deps.pool),
    segments: new SegmentWriter({
      pool: deps.pool,
      claims: new Claims(deps.pool, ledgerWrites, deps.staleClaimSeconds),
      settler: ledgerWrites,
      aftercare,
      log: app.log,
      written: (batches, bytes) => deps.metrics.segmentWritten(batches, bytes),
      crashAt: deps.intakeCrashAt,
    }),
    bodies: new BodyPool(SEND_BODY_LIMIT, BODY_SLABS_KEPT, LARGE_BODY_BYTES),
    inFlight: new InFlight(deps.sendInFlight),
  };
  app.addHook('onClose', async () => {
    sinkDeps.intakes.close();
    aftercare.close();
  });
  app.register(
    apiKeyScope(deps.pool, 'read', (read) => {
      listSinks(read, sinkDeps);
      getSink(read, sinkDeps);
      getBatch(read, sinkDeps);
      getSinkRejects(read, sinkDeps);
      getSinkPending(read, sinkDeps);
    }),
  );
  app.register(
    apiKeyScope(deps.pool, 'write', (write) => {
      createSink(write, sinkDeps);
      deleteSink(write, sinkDeps);
      rotateSendKey(write, sinkDeps);
      updateSink(write, sinkDeps);
    }),
  );
  sendBatch(app, sinkDeps);
  statusRoutes(app, sinkDeps);
}
