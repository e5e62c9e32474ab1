import { randomBytes } from 'node:crypto';
import { createDatabase, createPool, dropDatabase, migrate, query } from '@tablemere/db';
import { bootstrap } from '../apps/api/src/bootstrap.ts';
import { LedgerWrites } from '../apps/api/src/domain/intake/writes.ts';
import { stackEnv, stackWarehouse } from '../tests/support/stack.ts';

const env = stackEnv();
const url = new URL(env.DATABASE_URL!);
url.pathname = `/repro_${randomBytes(3).toString('hex')}`;
await createDatabase(url.toString());
await migrate(url.toString());
const pool = createPool(url.toString(), { applicationName: 'repro' });
const boot = await bootstrap(pool, { secretKey: randomBytes(32).toString('base64'), warehouse: { ...stackWarehouse(env), name: 'garden' } });
const [{ id: wh, project_id }] = (await query<{ id: string; project_id: string }>(pool, 'SELECT id, project_id FROM warehouses')) as any;
await query(pool, `INSERT INTO sinks (id, project_id, warehouse_id, name, namespace, table_name, table_uuid, roll_seconds, roll_bytes, send_key_sha256) VALUES ('snk_000000000001', $1, $2, 's', 'n', 't', 'u', 300, 67108864, $3)`, [project_id, wh, randomBytes(32)]);
const writes = new LedgerWrites(pool);
const mode = process.argv[2] ?? 'split';
let n = 0;
try {
  for (let round = 0; round < 200; round++) {
    const ids = Array.from({ length: 64 }, () => `b-${n++}`);
    const claims = await Promise.all(ids.map((batchId) => writes.claim({ sinkId: 'snk_000000000001', batchId, hashes: { digest: randomBytes(16) }, bytes: 100, rows: 2, rejected: 0, reasons: [], segmentId: '0000000aa-000000000000' })));
    await Promise.all(ids.map((batchId, i) => writes.settle({ sinkId: 'snk_000000000001', projectId: project_id, batchId, day: claims[i]!.day, receivedAt: claims[i]!.receivedAt, wireBytes: 100, segmentId: '0000000aa-000000000000', segmentOffset: mode === 'nulls' ? null : 10 })));
    if (round % 20 === 0) console.log('round', round);
  }
  console.log('no crash', boot.adminKey ? '' : '');
} finally {
  await pool.end();
  await dropDatabase(url.toString()).catch(() => undefined);
}
