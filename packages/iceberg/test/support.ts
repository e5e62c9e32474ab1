import { randomBytes } from 'node:crypto';
import { stackEnv } from '../../../tests/support/stack.ts';
import {
  compileRowConverter,
  currentSchema,
  parseJsonRow,
  RestCatalog,
  S3FileIO,
  schemaFromJson,
  writeDataFile,
  type CatalogAuth,
  type DataFile,
  type FileIO,
  type RestCatalogOptions,
  type S3FileIOOptions,
  type TableMetadata,
} from '../src/index.ts';

/** Connection settings for the running local stack. */
export function stack() {
  const env = stackEnv();
  const need = (name: string): string => {
    const value = env[name];
    if (!value) throw new Error(`.stack/env lacks ${name}`);
    return value;
  };
  return {
    uri: need('ICEBERG_REST_URI'),
    warehouse: need('ICEBERG_WAREHOUSE'),
    s3Endpoint: need('AWS_ENDPOINT_URL'),
    accessKeyId: need('AWS_ACCESS_KEY_ID'),
    secretAccessKey: need('AWS_SECRET_ACCESS_KEY'),
    region: need('AWS_REGION'),
  };
}

export function oauth2(): CatalogAuth {
  const s = stack();
  return { type: 'oauth2', clientId: s.accessKeyId, clientSecret: s.secretAccessKey };
}

export function catalogOptions(auth: CatalogAuth = oauth2()): RestCatalogOptions {
  const s = stack();
  return { uri: s.uri, warehouse: s.warehouse, auth };
}

/** Catalog names allow `[a-z0-9_-]` only. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

export function storeOptions(): S3FileIOOptions {
  const s = stack();
  return { endpoint: s.s3Endpoint, region: s.region, credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } };
}

/** Converts JSON rows (text, parsed exactly) for the table's current schema and writes one Parquet data file. */
export async function jsonRowsToDataFile(io: FileIO, metadata: TableMetadata, rows: readonly string[]): Promise<DataFile> {
  const schema = schemaFromJson(currentSchema(metadata));
  const converter = compileRowConverter(schema);
  for (const text of rows) {
    const reject = converter.append(parseJsonRow(text));
    if (reject) throw new Error(`test row rejected: ${reject.message} in ${text}`);
  }
  return writeDataFile({ io, tableLocation: metadata.location, table: converter.finish(), parquet: { schema } });
}

/** A test file's clients and namespace on the running stack. */
export interface TestNamespace {
  catalog: RestCatalog;
  io: S3FileIO;
}

/** Connects to the stack's catalog and store and creates the test file's namespace. */
export async function openTestNamespace(namespace: string): Promise<TestNamespace> {
  const catalog = await RestCatalog.connect(catalogOptions());
  const io = new S3FileIO(storeOptions());
  await catalog.createNamespace(namespace);
  return { catalog, io };
}

/** Drops the namespace with every table in it (and their files), and closes the store client. */
export async function closeTestNamespace({ catalog, io }: TestNamespace, namespace: string): Promise<void> {
  io.close();
  for (const t of await catalog.listTables(namespace)) await catalog.dropTable({ namespace, name: t.name }, { purge: true });
  await catalog.dropNamespace(namespace);
}
