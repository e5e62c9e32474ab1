import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { startProcess, type Managed } from './process.ts';
import { httpStatusIs, StackStartError, waitUntilReady } from './ready.ts';

/** The catalogs the stack can run: SeaweedFS's own, Iceberg's reference server, Nessie. */
export const CATALOGS = ['seaweedfs', 'reference', 'nessie'] as const;
export type CatalogName = (typeof CATALOGS)[number];
export type JvmCatalogName = Exclude<CatalogName, 'seaweedfs'>;

/** How a client reaches one catalog: what a warehouse registration needs. */
export interface CatalogEndpoint {
  name: CatalogName;
  uri: string;
  /** Sent to `/v1/config` as `warehouse`. */
  warehouse: string;
  /** The reference server and SeaweedFS hand out OAuth2 tokens; Nessie runs without authentication. */
  auth: 'oauth2' | 'none';
}

export interface StoreAccess {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface JvmCatalogOptions {
  root: string;
  /** This catalog's data dir (the reference server's SQLite file). */
  dir: string;
  logFile: string;
  port: number;
  /** Nessie's management interface (health, metrics), off the API port. */
  managementPort: number;
  store: StoreAccess;
}

export interface RunningCatalog {
  endpoint: CatalogEndpoint;
  proc: Managed;
}

/** Each JVM catalog keeps its tables in its own bucket on the stack's S3. */
export const catalogBucket = (name: JvmCatalogName) => `${name}-warehouse`;

const jarDir = (root: string) => path.join(root, '.venv', 'catalog-jars');
export const NESSIE_JAR = 'nessie-quarkus-0.99.0-runner.jar';
const MIN_JAVA: Record<JvmCatalogName, number> = { reference: 17, nessie: 21 };

/** The major version of a `java` binary, or undefined when it does not run. */
function javaMajor(java: string): number | undefined {
  const r = spawnSync(java, ['-version'], { encoding: 'utf8', timeout: 20_000 });
  const m = /version "(\d+)(?:\.(\d+))?/.exec(`${r.stderr ?? ''}${r.stdout ?? ''}`);
  if (r.status !== 0 || !m) return undefined;
  // Java 8 and older call themselves 1.x.
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}

/**
 * A `java` of at least `min`: $JAVA_HOME's, then the JDKs under /usr/lib/jvm (newest first), then
 * the one on PATH. Nessie needs 21+, while the machine's default may be 17.
 */
export function findJava(min: number, what: string): string {
  const jvmDir = '/usr/lib/jvm';
  const candidates = [
    ...(process.env.JAVA_HOME ? [path.join(process.env.JAVA_HOME, 'bin', 'java')] : []),
    ...(existsSync(jvmDir) ? readdirSync(jvmDir).sort().reverse().map((d) => path.join(jvmDir, d, 'bin', 'java')) : []),
    'java',
  ];
  const seen: string[] = [];
  for (const java of candidates) {
    if (java !== 'java' && !existsSync(java)) continue;
    const major = javaMajor(java);
    if (major !== undefined && major >= min) return java;
    seen.push(`${java} (${major === undefined ? 'does not run' : `Java ${major}`})`);
  }
  throw new Error(`${what} needs Java ${min} or newer; found ${seen.length ? seen.join(', ') : 'no java'}. Install a JDK ${min}+ or set JAVA_HOME to one`);
}

async function ensureBucket(store: StoreAccess, bucket: string): Promise<void> {
  const client = new S3Client({
    endpoint: store.endpoint,
    region: store.region,
    forcePathStyle: true,
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if (!(error instanceof S3ServiceException && error.name.startsWith('BucketAlready'))) throw error;
  } finally {
    client.destroy();
  }
}

function requireJars(root: string, name: JvmCatalogName, file: string): string {
  const location = path.join(jarDir(root), file);
  if (!existsSync(location)) {
    throw new StackStartError(`${name} catalog`, '(none)', `${location} is missing: run \`node scripts/ensure-install.mjs --catalog ${name}\` (npm test and \`npm start -- --catalog ${name}\` do it)`);
  }
  return location;
}

/**
 * Iceberg's reference REST catalog 1.11 (the fixture behind the project's `apache/iceberg-rest-fixture`
 * image): a JDBC catalog on SQLite, tables on the stack's S3, bound to 127.0.0.1.
 */
export async function startReferenceCatalog(o: JvmCatalogOptions): Promise<RunningCatalog> {
  const jars = requireJars(o.root, 'reference', 'reference');
  const java = findJava(MIN_JAVA.reference, 'the reference catalog');
  const bucket = catalogBucket('reference');
  await ensureBucket(o.store, bucket);
  mkdirSync(o.dir, { recursive: true });
  const proc = startProcess({
    name: 'reference-catalog',
    cmd: java,
    args: ['-Xmx384m', '-cp', `${jars}/*`, path.join(o.root, 'scripts', 'stack', 'java', 'ReferenceCatalog.java')],
    logFile: o.logFile,
    env: {
      ...process.env,
      REST_HOST: '127.0.0.1',
      REST_PORT: String(o.port),
      CATALOG_URI: `jdbc:sqlite:file:${path.join(o.dir, 'catalog.db')}`,
      CATALOG_WAREHOUSE: `s3://${bucket}/`,
      CATALOG_IO__IMPL: 'org.apache.iceberg.aws.s3.S3FileIO',
      CATALOG_S3_ENDPOINT: o.store.endpoint,
      CATALOG_S3_PATH__STYLE__ACCESS: 'true',
      CATALOG_S3_ACCESS__KEY__ID: o.store.accessKeyId,
      CATALOG_S3_SECRET__ACCESS__KEY: o.store.secretAccessKey,
      CATALOG_CLIENT_REGION: o.store.region,
      AWS_REGION: o.store.region,
    },
  });
  const uri = `http://127.0.0.1:${o.port}`;
  await waitUntilReady('reference catalog', () => httpStatusIs(`${uri}/v1/config`), { deadlineMs: 90_000, proc });
  return { proc, endpoint: { name: 'reference', uri, warehouse: `s3://${bucket}/`, auth: 'oauth2' } };
}

/**
 * Nessie (the Quarkus runner jar) with its in-memory version store: Iceberg REST under `/iceberg`,
 * warehouse `warehouse` on the stack's S3 with the stack's key pair, no request signing.
 */
export async function startNessie(o: JvmCatalogOptions): Promise<RunningCatalog> {
  const jar = requireJars(o.root, 'nessie', NESSIE_JAR);
  const java = findJava(MIN_JAVA.nessie, 'Nessie');
  const bucket = catalogBucket('nessie');
  await ensureBucket(o.store, bucket);
  const s3 = 'nessie.catalog.service.s3.default-options';
  const settings: Record<string, string> = {
    'quarkus.http.host': '127.0.0.1',
    'quarkus.http.port': String(o.port),
    'quarkus.management.host': '127.0.0.1',
    'quarkus.management.port': String(o.managementPort),
    'quarkus.otel.sdk.disabled': 'true',
    'nessie.version.store.type': 'IN_MEMORY',
    'nessie.catalog.default-warehouse': 'warehouse',
    'nessie.catalog.warehouses.warehouse.location': `s3://${bucket}/`,
    [`${s3}.endpoint`]: o.store.endpoint,
    [`${s3}.path-style-access`]: 'true',
    [`${s3}.region`]: o.store.region,
    [`${s3}.request-signing-enabled`]: 'false',
    [`${s3}.access-key`]: 'urn:nessie-secret:quarkus:tablemere.s3',
  };
  const proc = startProcess({
    name: 'nessie',
    cmd: java,
    args: ['-Xmx512m', ...Object.entries(settings).map(([k, v]) => `-D${k}=${v}`), '-jar', jar],
    logFile: o.logFile,
    // The key pair goes through the environment, never the command line (ps shows it).
    env: { ...process.env, TABLEMERE_S3_NAME: o.store.accessKeyId, TABLEMERE_S3_SECRET: o.store.secretAccessKey },
  });
  const uri = `http://127.0.0.1:${o.port}/iceberg`;
  await waitUntilReady('nessie', () => httpStatusIs(`${uri}/v1/config?warehouse=warehouse`), { deadlineMs: 120_000, proc });
  return { proc, endpoint: { name: 'nessie', uri, warehouse: 'warehouse', auth: 'none' } };
}

export function startJvmCatalog(name: JvmCatalogName, o: JvmCatalogOptions): Promise<RunningCatalog> {
  return name === 'reference' ? startReferenceCatalog(o) : startNessie(o);
}
