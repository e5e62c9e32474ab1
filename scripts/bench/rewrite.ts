/**
 * Compaction benchmark: a table of `--files` small data files of `--rows` rows each (one append
 * per file, as a sink rolled every minute leaves them) rewritten by `rewriteDataFiles` into one
 * file. Needs the local stack (`npm start`). Prints the set-up, the rewrite's wall and CPU time,
 * rows per second and the process's peak RSS, then drops the table.
 *
 *   npm run bench:rewrite [-- --files 100 --rows 5000]
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { appendDataFiles, compileRowConverter, RestCatalog, rewriteDataFiles, S3FileIO, schemaFromJson, writeDataFile } from '@tablemere/iceberg';
import { stackEnv } from '../../tests/support/stack.ts';

const SCHEMA = {
  type: 'struct' as const,
  'schema-id': 0,
  fields: [
    { id: 1, name: 'seq', required: true, type: 'long' },
    { id: 2, name: 'device', required: true, type: 'string' },
    { id: 3, name: 'ts', required: true, type: 'timestamptz' },
    { id: 4, name: 'temperature', required: false, type: 'double' },
    { id: 5, name: 'status', required: false, type: 'string' },
    { id: 6, name: 'reading', required: false, type: 'decimal(12, 3)' },
    { id: 7, name: '__ingest_ts', required: false, type: 'timestamptz' },
  ],
};
const STATUSES = ['ok', 'ok', 'degraded', 'offline'];

const { values } = parseArgs({ options: { files: { type: 'string', default: '100' }, rows: { type: 'string', default: '5000' } } });
const files = Number(values.files);
const rowsPerFile = Number(values.rows);

const env = stackEnv();
const catalog = await RestCatalog.connect({
  uri: env.ICEBERG_REST_URI!,
  warehouse: env.ICEBERG_WAREHOUSE!,
  auth: { type: 'oauth2', clientId: env.AWS_ACCESS_KEY_ID!, clientSecret: env.AWS_SECRET_ACCESS_KEY! },
});
const io = new S3FileIO({
  endpoint: env.AWS_ENDPOINT_URL!,
  region: env.AWS_REGION!,
  credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
});
const namespace = `bench_rewrite_${randomBytes(4).toString('hex')}`;
const table = { namespace, name: 'events' };
await catalog.createNamespace(namespace);
try {
  const setUp = performance.now();
  let metadata = (await catalog.createTable(namespace, table.name, { schema: SCHEMA })).metadata;
  const converter = compileRowConverter(schemaFromJson(SCHEMA));
  for (let f = 0; f < files; f++) {
    for (let r = 0; r < rowsPerFile; r++) {
      const seq = f * rowsPerFile + r;
      const at = new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString();
      converter.append({
        seq,
        device: `device-${seq % 500}`,
        ts: at,
        temperature: seq % 17 === 0 ? null : 20 + (seq % 100) / 10,
        status: STATUSES[seq % STATUSES.length],
        reading: `${seq % 100000}.${seq % 1000}`,
        __ingest_ts: at,
      });
    }
    const dataFile = await writeDataFile({ io, tableLocation: metadata.location, table: converter.finish(), parquet: { schema: schemaFromJson(SCHEMA) } });
    metadata = (await appendDataFiles({ catalog, table, io, dataFiles: [dataFile] })).metadata;
  }
  console.log(`set-up: ${files} appends of ${rowsPerFile} rows in ${((performance.now() - setUp) / 1000).toFixed(1)} s`);

  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await rewriteDataFiles({ catalog, table, io });
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const rows = Number(result.rewritten.rows);
  console.log(
    `rewrite: ${result.rewritten.files} files (${(Number(result.rewritten.bytes) / 2 ** 20).toFixed(1)} MiB) -> ${result.added.files} ` +
      `(${(Number(result.added.bytes) / 2 ** 20).toFixed(1)} MiB), ${rows} rows in ${seconds.toFixed(2)} s ` +
      `(${Math.round(rows / seconds)} rows/s, CPU ${((used.user + used.system) / 1e6).toFixed(2)} s), peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`,
  );
} finally {
  await catalog.dropTable(table, { purge: true });
  await catalog.dropNamespace(namespace);
  io.close();
}
