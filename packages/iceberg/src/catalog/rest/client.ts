import { IcebergError } from '../../errors.ts';
import type { TableMetadata } from '../../spec/metadata.ts';
import { createAuthProvider, type CatalogAuth } from './auth.ts';
import { DEFAULT_NAMESPACE_SEPARATOR, Endpoints, namespaceLevels } from './endpoints.ts';
import { RestTransport, type RestRequest } from './http.ts';
import type {
  CommitTableRequest,
  CommitTableResult,
  CreateTableRequest,
  LoadTableResult,
  Namespace,
  StorageCredential,
  TableIdent,
  TableIdentifier,
} from './types.ts';

export interface RestCatalogOptions {
  /** Base URI of the catalog, e.g. `http://127.0.0.1:8181` (routes are `{uri}/v1/...`). */
  uri: string;
  /** Warehouse sent to `GET /v1/config`; the answer supplies the route prefix. */
  warehouse?: string;
  auth?: CatalogAuth;
  /** Per-request timeout; default 15 s. */
  timeoutMs?: number;
  /** Extra headers on every catalog request. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

const DEFAULT_TIMEOUT_MS = 15_000;

/** Asks the catalog to return table-scoped storage credentials when it can. */
const VENDED_CREDENTIALS = { 'x-iceberg-access-delegation': 'vended-credentials' };

/** A client of the Iceberg REST catalog API. Create it with `RestCatalog.connect`. */
export class RestCatalog {
  private constructor(
    private readonly transport: RestTransport,
    private readonly endpoints: Endpoints,
    /** Catalog properties from `/v1/config`: defaults overlaid with overrides. */
    readonly properties: Readonly<Record<string, string>>,
    readonly prefix: string | undefined,
  ) {}

  /** Reads `/v1/config` (the prefix and properties the catalog wants) and returns a client. */
  static async connect(options: RestCatalogOptions): Promise<RestCatalog> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    const auth = createAuthProvider(options.auth ?? { type: 'none' }, { uri: options.uri, timeoutMs, fetch: fetchImpl });
    const transport = new RestTransport({ uri: options.uri, auth, timeoutMs, headers: options.headers ?? {}, fetch: fetchImpl });
    const { body } = await transport.send({
      method: 'GET',
      path: Endpoints.config(),
      query: { warehouse: options.warehouse },
      operation: 'read',
      what: 'read catalog config',
    });
    const properties = catalogProperties(body);
    const prefix = properties['prefix'];
    const endpoints = new Endpoints(prefix, properties['namespace-separator'] ?? DEFAULT_NAMESPACE_SEPARATOR);
    return new RestCatalog(transport, endpoints, Object.freeze(properties), prefix);
  }

  async listNamespaces(parent?: Namespace): Promise<string[][]> {
    const query = parent === undefined ? {} : { parent: this.endpoints.namespaceParam(parent) };
    const pages = await this.paged(
      { method: 'GET', path: this.endpoints.namespaces(), query, operation: 'read', what: 'list namespaces' },
      'namespaces',
    );
    return pages as string[][];
  }

  async createNamespace(namespace: Namespace, properties: Record<string, string> = {}): Promise<void> {
    await this.transport.send({
      method: 'POST',
      path: this.endpoints.namespaces(),
      body: { namespace: namespaceLevels(namespace), properties },
      operation: 'create',
      what: `create namespace ${label(namespace)}`,
    });
  }

  /** Creates the namespace unless it exists; true when it was created. */
  async ensureNamespace(namespace: Namespace, properties: Record<string, string> = {}): Promise<boolean> {
    try {
      await this.createNamespace(namespace, properties);
      return true;
    } catch (error) {
      if (error instanceof IcebergError && error.kind === 'already_exists') return false;
      throw error;
    }
  }

  async namespaceExists(namespace: Namespace): Promise<boolean> {
    return this.exists({
      method: 'HEAD',
      path: this.endpoints.namespace(namespace),
      operation: 'read',
      what: `check namespace ${label(namespace)}`,
    });
  }

  async dropNamespace(namespace: Namespace): Promise<void> {
    await this.transport.send({
      method: 'DELETE',
      path: this.endpoints.namespace(namespace),
      operation: 'other',
      what: `drop namespace ${label(namespace)}`,
    });
  }

  async listTables(namespace: Namespace): Promise<TableIdentifier[]> {
    const pages = await this.paged(
      { method: 'GET', path: this.endpoints.tables(namespace), operation: 'read', what: `list tables in ${label(namespace)}` },
      'identifiers',
    );
    return pages as TableIdentifier[];
  }

  /**
   * Creates a table. The catalog may reassign field ids: use the schema in the returned
   * metadata, not the one sent.
   */
  async createTable(namespace: Namespace, name: string, request: CreateTableRequest): Promise<LoadTableResult> {
    const { body } = await this.transport.send({
      method: 'POST',
      path: this.endpoints.tables(namespace),
      headers: VENDED_CREDENTIALS,
      body: createTableBody(name, request),
      operation: 'create',
      what: `create table ${label(namespace, name)}`,
    });
    return loadTableResult(body);
  }

  async loadTable(table: TableIdent): Promise<LoadTableResult> {
    const { body } = await this.transport.send({
      method: 'GET',
      path: this.endpoints.table(table.namespace, table.name),
      headers: VENDED_CREDENTIALS,
      operation: 'read',
      what: `load table ${label(table.namespace, table.name)}`,
    });
    return loadTableResult(body);
  }

  async tableExists(table: TableIdent): Promise<boolean> {
    return this.exists({
      method: 'HEAD',
      path: this.endpoints.table(table.namespace, table.name),
      operation: 'read',
      what: `check table ${label(table.namespace, table.name)}`,
    });
  }

  /** Drops a table; with `purge` the catalog also deletes its files. */
  async dropTable(table: TableIdent, options: { purge?: boolean } = {}): Promise<void> {
    await this.transport.send({
      method: 'DELETE',
      path: this.endpoints.table(table.namespace, table.name),
      query: options.purge ? { purgeRequested: 'true' } : {},
      operation: 'other',
      what: `drop table ${label(table.namespace, table.name)}`,
    });
  }

  /**
   * Applies updates if every requirement holds. Fails with `commit_conflict` when another
   * writer changed the table first, and `commit_state_unknown` when the outcome is unknown.
   */
  async commitTable(table: TableIdent, request: CommitTableRequest): Promise<CommitTableResult> {
    const { body } = await this.transport.send({
      method: 'POST',
      path: this.endpoints.table(table.namespace, table.name),
      body: {
        identifier: { namespace: namespaceLevels(table.namespace), name: table.name },
        requirements: request.requirements,
        updates: request.updates,
      },
      operation: 'commit',
      what: `commit to table ${label(table.namespace, table.name)}`,
    });
    const result = body as { 'metadata-location'?: unknown; metadata?: unknown } | undefined;
    if (typeof result?.['metadata-location'] !== 'string' || !result.metadata) {
      throw new IcebergError('commit_state_unknown', `commit to table ${label(table.namespace, table.name)}: response lacks metadata`);
    }
    return { metadataLocation: result['metadata-location'], metadata: result.metadata as TableMetadata };
  }

  private async exists(request: RestRequest): Promise<boolean> {
    try {
      await this.transport.send(request);
      return true;
    } catch (error) {
      if (error instanceof IcebergError && error.kind === 'not_found') return false;
      throw error;
    }
  }

  /** Follows `next-page-token` until the catalog has no more pages. */
  private async paged(request: RestRequest, field: string): Promise<unknown[]> {
    const items: unknown[] = [];
    let pageToken: string | undefined;
    do {
      const { body } = await this.transport.send({ ...request, query: { ...request.query, pageToken } });
      const page = (body ?? {}) as Record<string, unknown>;
      const entries = page[field];
      if (Array.isArray(entries)) items.push(...entries);
      const next = page['next-page-token'];
      pageToken = typeof next === 'string' && next.length > 0 ? next : undefined;
    } while (pageToken !== undefined);
    return items;
  }
}

function label(namespace: Namespace, name?: string): string {
  const ns = namespaceLevels(namespace).join('.');
  return name === undefined ? ns : `${ns}.${name}`;
}

/** The catalog's properties from a `/v1/config` answer: `defaults`, then `overrides` on top. */
export function catalogProperties(config: unknown): Record<string, string> {
  const { defaults, overrides } = (config ?? {}) as { defaults?: unknown; overrides?: unknown };
  return { ...stringRecord(defaults), ...stringRecord(overrides) };
}

/**
 * The CreateTableRequest body as the Java client and PyIceberg send it: `stage-create`, the
 * partition spec and sort order always present and with their ids (Nessie and the reference
 * server refuse a body without them).
 */
export function createTableBody(name: string, request: CreateTableRequest): Record<string, unknown> {
  return {
    name,
    schema: request.schema,
    'partition-spec': { 'spec-id': 0, fields: [], ...request.partitionSpec },
    'write-order': { 'order-id': request.writeOrder?.fields.length ? 1 : 0, fields: [], ...request.writeOrder },
    ...(request.location ? { location: request.location } : {}),
    'stage-create': false,
    properties: request.properties ?? {},
  };
}

function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (v !== null && v !== undefined) out[key] = String(v);
    }
  }
  return out;
}

function loadTableResult(body: unknown): LoadTableResult {
  const result = (body ?? {}) as {
    'metadata-location'?: unknown;
    metadata?: unknown;
    config?: unknown;
    'storage-credentials'?: unknown;
  };
  if (!result.metadata || typeof result.metadata !== 'object') {
    throw new IcebergError('server_error', 'catalog answered a table without metadata');
  }
  const credentials = Array.isArray(result['storage-credentials']) ? result['storage-credentials'] : [];
  return {
    metadataLocation: typeof result['metadata-location'] === 'string' ? result['metadata-location'] : undefined,
    metadata: result.metadata as TableMetadata,
    config: stringRecord(result.config),
    storageCredentials: credentials.map((c: { prefix?: unknown; config?: unknown }) => ({
      prefix: String(c.prefix ?? ''),
      config: stringRecord(c.config),
    })) satisfies StorageCredential[],
  };
}
