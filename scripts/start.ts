/**
 * `npm start [-- --catalog seaweedfs|reference|nessie]`: the local stack, the API and the roller in
 * one terminal, until Ctrl-C. `--catalog` picks the Iceberg REST catalog the bootstrap warehouse
 * registers: SeaweedFS's own (default), Iceberg's reference server, or Nessie.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startStack, stackPaths, WAREHOUSE_NAME } from './stack/index.ts';
import { CATALOGS, type CatalogName } from './stack/jvm-catalogs.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const offset = Number(process.env.TABLEMERE_STACK_PORT_OFFSET ?? 0);
const say = (line: string) => console.log(`[stack] ${line}`);

const { values } = parseArgs({ options: { catalog: { type: 'string', default: 'seaweedfs' } } });
if (!(CATALOGS as readonly string[]).includes(values.catalog)) {
  console.error(`[stack] --catalog must be one of ${CATALOGS.join(', ')}; got ${values.catalog}`);
  process.exit(2);
}
const catalog = values.catalog as CatalogName;
// `npm start` installs the common parts first; a JVM catalog's jars only when it is asked for.
if (catalog !== 'seaweedfs') {
  const install = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-install.mjs'), '--catalog', catalog], { stdio: 'inherit' });
  if (install.status !== 0) process.exit(1);
}

let stack;
try {
  stack = await startStack({ root, dir: process.env.TABLEMERE_STACK_DIR, portOffset: offset, databaseUrl: process.env.DATABASE_URL, catalog, say });
} catch (err) {
  console.error(`[stack] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
const paths = stackPaths(root, process.env.TABLEMERE_STACK_DIR);
// Before the quickstart is printed: whoever reads it may press Ctrl-C at once.
let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping…`);
  await stack.stop();
  say('stopped');
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGHUP', () => void shutdown('SIGHUP'));
const seconds = (ms: number | undefined) => ((ms ?? 0) / 1000).toFixed(1);
say(`ready in ${seconds(stack.timings.total)} s (postgres ${seconds(stack.timings.postgres)} s, seaweedfs ${seconds(stack.timings.seaweedfs)} s)`);
console.log(`
  API            ${stack.env.TABLEMERE_API_URL}
  Iceberg REST   ${stack.env.ICEBERG_REST_URI}   (${catalog}, warehouse ${stack.env.ICEBERG_WAREHOUSE})
  S3             ${stack.env.AWS_ENDPOINT_URL}
  Postgres       ${stack.env.DATABASE_URL}
  env file       ${paths.envFile}   (admin key, endpoints, credentials; mode 0600)
  logs           ${paths.logs}/

Quickstart, in another terminal at the repo root (README.md walks through it):

  npx tablemere sink create ${WAREHOUSE_NAME} --table garden.events --name events_in \\
      --column x:long:required --column who:string \\
      --inactivity-seconds 10 --save ~/events-sink.json --force
  printf '[{"x": 1, "who": "north"}, {"x": 2}]\\n' > batch.json
  npx tablemere sink send events_in batch.json --send-key-file ~/events-sink.json
  npx tablemere sink get events_in          # lag, last roll, rejects
  npx tablemere connect ${WAREHOUSE_NAME}           # PyIceberg, DuckDB and Spark settings

  # once the roll happened (10 s of quiet, then the roller's next tick), with only the env file:
  source ${paths.envFile}
  .venv/bin/python -c 'from pyiceberg.catalog import load_catalog; print(load_catalog("${WAREHOUSE_NAME}").load_table("garden.events").scan().to_arrow().to_pylist())'

Data is fresh at every start. Ctrl-C stops everything.
`);
