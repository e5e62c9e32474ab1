import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { migrate } from '@tablemere/db';
import { bootstrap } from '../../apps/api/src/bootstrap.ts';
import { writeEnvFile } from './env-file.ts';
import { startJvmCatalog, type CatalogEndpoint, type CatalogName } from './jvm-catalogs.ts';
import { busyPorts, stackPorts, type StackPorts } from './ports.ts';
import { startPostgres } from './postgres.ts';
import { startProcess, type Managed } from './process.ts';
import { httpStatusIs, waitUntilReady } from './ready.ts';
import { startSeaweed } from './seaweed.ts';
import { reportExit, supervise, type Supervised } from './supervise.ts';
import { reapStale, runningStack, writeState } from './state.ts';

export interface StackOptions {
  root: string;
  /** Where state, data and logs go (TABLEMERE_STACK_DIR); `<root>/.stack` by default. */
  dir?: string | undefined;
  /** Added to every port (TABLEMERE_STACK_PORT_OFFSET). */
  portOffset?: number;
  /** DATABASE_URL: use this Postgres instead of starting one. */
  databaseUrl?: string | undefined;
  /** The catalog the bootstrap warehouse registers (`npm start -- --catalog`); SeaweedFS's by default. */
  catalog?: CatalogName;
  say?: (line: string) => void;
}

export interface Stack {
  env: Record<string, string>;
  /** Milliseconds each component took to become ready, and the whole start. */
  timings: Record<string, number>;
  stop(): Promise<void>;
  /** The pid of a supervised service (`api`, `roller`) as it runs now. */
  pid(name: string): number | undefined;
  dependencies: StackDependencies;
}

/** The stores' processes, for fault drills: kill one by its pid, then start it again on its data. */
export interface StackDependencies {
  postgresPid(): number | undefined;
  restartPostgres(): Promise<void>;
  seaweedPid(): number | undefined;
  restartSeaweed(): Promise<void>;
}

export const TABLE_BUCKET = 'warehouse';
export const INTAKE_BUCKET = 'tablemere-intake';
export const WAREHOUSE_NAME = 'garden';
const REGION = 'us-east-1';

export function stackPaths(root: string, stackDir?: string) {
  const dir = stackDir ? path.resolve(stackDir) : path.join(root, '.stack');
  return {
    dir,
    data: path.join(dir, 'data'),
    logs: path.join(dir, 'logs'),
    envFile: path.join(dir, 'env'),
    stateFile: path.join(dir, 'state.json'),
  };
}

/**
 * Starts the whole local stack from fresh data dirs: Postgres, SeaweedFS (S3 + Iceberg REST catalog),
 * migrations, the bootstrap project, the API and the roller. Writes `.stack/env` last, so its presence
 * means everything answered.
 */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const say = opts.say ?? (() => {});
  const paths = stackPaths(opts.root, opts.dir);
  // Postgres runs as its own user when we are root: it must be able to enter these dirs.
  mkdirSync(paths.dir, { recursive: true, mode: 0o755 });
  chmodSync(paths.dir, 0o755);
  await reapStale(paths.stateFile);
  const running = await runningStack(paths.stateFile);
  if (running) {
    throw new Error(`a local stack is already running (pid ${running.ownerPid}, API ${running.apiUrl}); stop it first (Ctrl-C in its terminal, or kill ${running.ownerPid})`);
  }
  rmSync(paths.envFile, { force: true });
  rmSync(paths.data, { recursive: true, force: true });
  mkdirSync(paths.data, { recursive: true, mode: 0o755 });
  mkdirSync(paths.logs, { recursive: true });
  for (const f of ['postgres.log', 'seaweedfs.log', 'reference.log', 'nessie.log', 'api.log', 'roller.log']) rmSync(path.join(paths.logs, f), { force: true });

  const ports = stackPorts(opts.portOffset ?? 0);
  const busy = await busyPorts(ports);
  if (busy.length > 0) {
    throw new Error(`ports already in use: ${busy.join(', ')}; stop what holds them or set TABLEMERE_STACK_PORT_OFFSET (e.g. 3000)`);
  }
  const secret = () => randomBytes(24).toString('base64url');
  const creds = { accessKeyId: 'tablemere', secretAccessKey: secret() };
  const bootstrapSecret = secret();
  const encryptionKey = randomBytes(32).toString('base64');
  const apiUrl = `http://127.0.0.1:${ports.api}`;
  const s3Url = `http://127.0.0.1:${ports.s3}`;
  const icebergUrl = `http://127.0.0.1:${ports.iceberg}`;
  const timings: Record<string, number> = {};
  const started = Date.now();
  const stops: Array<() => Promise<void>> = [];
  const procs: Managed[] = [];
  const services: Record<string, Supervised> = {};
  let dependencies: StackDependencies | undefined;

  let stopping = false;
  const stop = async () => {
    stopping = true;
    rmSync(paths.envFile, { force: true });
    for (const s of stops.reverse()) await s().catch(() => {});
    rmSync(paths.stateFile, { force: true });
  };
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    say(`starting ${name}…`);
    const out = await fn();
    timings[name] = Date.now() - t;
    return out;
  };

  try {
    const pg = await timed('postgres', () =>
      startPostgres({ dir: path.join(paths.data, 'pg'), port: ports.postgres, logFile: path.join(paths.logs, 'postgres.log'), databaseUrl: opts.databaseUrl }),
    );
    stops.push(pg.stop);
    const recordState = () =>
      writeState(paths.stateFile, {
        ownerPid: process.pid,
        startedAt: new Date(started).toISOString(),
        apiUrl,
        pids: [pg.pid, ...procs.map((p) => p.child.pid)].filter((p): p is number => p !== undefined),
      });
    recordState();

    const weedOptions = {
      weedBin: path.join(opts.root, '.venv', 'bin', 'weed'),
      dir: path.join(paths.data, 'weed'),
      logFile: path.join(paths.logs, 'seaweedfs.log'),
      ports,
      tableBucket: TABLE_BUCKET,
      intakeBucket: INTAKE_BUCKET,
      region: REGION,
      ...creds,
    };
    let weed = await timed('seaweedfs', () => startSeaweed(weedOptions));
    const weedSlot = procs.push(weed) - 1;
    stops.push(() => weed.stop());
    reportExit(weed, say, () => stopping);
    dependencies = {
      postgresPid: () => pg.pid,
      restartPostgres: async () => {
        await pg.restart();
        recordState();
      },
      seaweedPid: () => weed.child.pid,
      restartSeaweed: async () => {
        weed = await startSeaweed(weedOptions);
        procs[weedSlot] = weed;
        reportExit(weed, say, () => stopping);
        recordState();
      },
    };
    recordState();

    const store = { endpoint: s3Url, region: REGION, ...creds };
    let catalog: CatalogEndpoint = { name: 'seaweedfs', uri: icebergUrl, warehouse: `s3://${TABLE_BUCKET}`, auth: 'oauth2' };
    const jvmCatalog = opts.catalog;
    if (jvmCatalog !== undefined && jvmCatalog !== 'seaweedfs') {
      const running = await timed(jvmCatalog, () => startJvmCatalog(jvmCatalog, jvmCatalogOptions(opts.root, paths, ports, jvmCatalog, store)));
      procs.push(running.proc);
      stops.push(() => running.proc.stop());
      reportExit(running.proc, say, () => stopping);
      recordState();
      catalog = running.endpoint;
    }
    const catalogAuth = catalog.auth === 'oauth2' ? { type: 'oauth2' as const, clientId: creds.accessKeyId, clientSecret: creds.secretAccessKey } : { type: 'none' as const };

    const apiKey = await timed('migrations + bootstrap', async () => {
      await migrate(pg.url);
      const out = await bootstrap(pg.url, {
        warehouse: {
          name: WAREHOUSE_NAME,
          restUri: catalog.uri,
          warehouse: catalog.warehouse,
          auth: catalogAuth,
          s3: { endpoint: s3Url, region: REGION, accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey },
        },
        secretKey: encryptionKey,
      });
      if (!out.adminKey) throw new Error('bootstrap did not create an admin key in a fresh database');
      return out.adminKey;
    });

    const serviceEnv = {
      ...process.env,
      DATABASE_URL: pg.url,
      AWS_ENDPOINT_URL: s3Url,
      AWS_ACCESS_KEY_ID: creds.accessKeyId,
      AWS_SECRET_ACCESS_KEY: creds.secretAccessKey,
      AWS_REGION: REGION,
      TABLEMERE_INTAKE_BUCKET: INTAKE_BUCKET,
      TABLEMERE_SECRET_KEY: encryptionKey,
      TABLEMERE_BOOTSTRAP_SECRET: bootstrapSecret,
      TABLEMERE_API_HOST: '127.0.0.1',
      TABLEMERE_API_PORT: String(ports.api),
      TABLEMERE_PUBLIC_URL: apiUrl,
      TABLEMERE_API_URL: apiUrl,
      TABLEMERE_ROLLER_PORT: String(ports.roller),
      TABLEMERE_INTERNAL_HOST: '127.0.0.1',
      TABLEMERE_INTERNAL_PORT: String(ports.internal),
      TABLEMERE_INTERNAL_URL: `http://127.0.0.1:${ports.internal}`,
    };
    // The API and the roller are restarted when they die (supervise.ts); the stores are not.
    const service = (name: string, entry: string, healthUrl: string, env: NodeJS.ProcessEnv = serviceEnv) =>
      timed(name, async () => {
        const launch = () =>
          startProcess({
            name,
            cmd: process.execPath,
            args: ['--import', 'tsx', entry],
            cwd: opts.root,
            env,
            logFile: path.join(paths.logs, `${name}.log`),
          });
        const proc = launch();
        const slot = procs.push(proc) - 1;
        let supervised: Supervised | undefined;
        stops.push(() => supervised?.stop() ?? proc.stop());
        recordState();
        await waitUntilReady(name, () => httpStatusIs(healthUrl), { deadlineMs: 60_000, proc });
        supervised = supervise(proc, launch, {
          say,
          onRestart: (next) => {
            procs[slot] = next;
            recordState();
          },
        });
        services[name] = supervised;
      });
    await service('api', 'apps/api/src/start.ts', `${apiUrl}/healthz`, serviceEnv);
    await service('roller', 'apps/roller/src/main.ts', `http://127.0.0.1:${ports.roller}/healthz`);

    const env = {
      TABLEMERE_API_URL: apiUrl,
      TABLEMERE_API_KEY: apiKey,
      TABLEMERE_WAREHOUSE: WAREHOUSE_NAME,
      DATABASE_URL: pg.url,
      AWS_ENDPOINT_URL: s3Url,
      AWS_ACCESS_KEY_ID: creds.accessKeyId,
      AWS_SECRET_ACCESS_KEY: creds.secretAccessKey,
      AWS_REGION: REGION,
      TABLEMERE_CATALOG: catalog.name,
      ICEBERG_REST_URI: catalog.uri,
      ICEBERG_WAREHOUSE: catalog.warehouse,
      TABLEMERE_INTAKE_BUCKET: INTAKE_BUCKET,
      TABLEMERE_BOOTSTRAP_SECRET: bootstrapSecret,
      TABLEMERE_ROLLER_URL: `http://127.0.0.1:${ports.roller}`,
      TABLEMERE_INTERNAL_URL: `http://127.0.0.1:${ports.internal}`,
      // PyIceberg reads catalogs from PYICEBERG_CATALOG__<NAME>__<KEY>: `load_catalog("garden")` needs nothing else.
      ...pyicebergCatalogEnv(WAREHOUSE_NAME, {
        type: 'rest',
        uri: catalog.uri,
        warehouse: catalog.warehouse,
        ...(catalog.auth === 'oauth2' ? { credential: `${creds.accessKeyId}:${creds.secretAccessKey}` } : {}),
        's3.endpoint': s3Url,
        's3.access-key-id': creds.accessKeyId,
        's3.secret-access-key': creds.secretAccessKey,
        's3.region': REGION,
      }),
    };
    timings.total = Date.now() - started;
    writeEnvFile(paths.envFile, env, `local stack started ${new Date(started).toISOString()} by pid ${process.pid}; source it to reach the stack`);
    return { env, timings, stop, pid: (name) => services[name]?.current().child.pid, dependencies: dependencies! };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Where a JVM catalog of this stack keeps its data and log, and the ports it takes. */
export function jvmCatalogOptions(
  root: string,
  paths: ReturnType<typeof stackPaths>,
  ports: StackPorts,
  name: Exclude<CatalogName, 'seaweedfs'>,
  store: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string },
) {
  return {
    root,
    dir: path.join(paths.data, name),
    logFile: path.join(paths.logs, `${name}.log`),
    port: name === 'reference' ? ports.reference : ports.nessie,
    managementPort: ports.nessieManagement,
    store,
  };
}

function pyicebergCatalogEnv(name: string, props: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(props)) {
    const envKey = key.replaceAll('.', '__').replaceAll('-', '_').toUpperCase();
    out[`PYICEBERG_CATALOG__${name.toUpperCase()}__${envKey}`] = value;
  }
  return out;
}
