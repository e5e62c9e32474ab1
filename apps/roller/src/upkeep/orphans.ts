import { deleteOrphanFiles, type DeleteOrphanFilesResult } from '@tablemere/iceberg';
import { checkpoint, type RollContext } from '../roll/context.ts';
import type { TenantTable } from '../roll/reload.ts';

/**
 * Upkeep's last table step: delete the files under the table's location that no metadata
 * references and that are older than the safety age (`settings.upkeep.orphanAgeMs`, 3 days by
 * default, never under a day from the environment): Parquet of a roll or a compaction killed
 * before its commit, manifests of a lost commit. The table is loaded again first, so the
 * reference set is that of the metadata after this run's own commits.
 *
 * The sink's own objects (`_sink/<sink>/…`: batches, rejects, roll sidecars) live in the intake
 * bucket, not under the table; should an operator put both in one place, their prefix is
 * excluded, and Java's hidden-path rule (`_…`, `.…`) keeps them out as well.
 */
export async function removeOrphans(ctx: RollContext, table: TenantTable): Promise<DeleteOrphanFilesResult> {
  const { settings } = ctx.deps;
  checkpoint(ctx);
  const loaded = await table.catalog.loadTable(table.ident);
  const result = await deleteOrphanFiles({
    io: table.io,
    metadataLocation: loaded.metadataLocation,
    metadata: loaded.metadata,
    olderThan: Date.now() - settings.upkeep.orphanAgeMs,
    excludedPrefixes: [`s3://${ctx.sink.intake.bucket}/${ctx.sink.intake.prefix}`],
    beforeDelete: () => {
      // Deleting under a lost lease is still safe (the files are old and unreferenced), but a
      // run that lost its lease stops where it is, as every other step does.
      checkpoint(ctx);
      ctx.lease.assertHeld(settings.leaseMarginMs);
    },
  });
  if (result.skipped !== null) ctx.log.warn({ skipped: result.skipped, detail: result.detail }, 'orphan files were not removed this time');
  else if (result.found > 0) ctx.log.info({ orphans: result.sample, deleted: result.deleted, failed: result.failed }, 'orphan files removed');
  return result;
}
