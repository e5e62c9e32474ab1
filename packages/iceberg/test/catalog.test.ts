import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAuthProvider } from '../src/catalog/rest/auth.ts';
import { IcebergError, RestCatalog, branchHeadId, snapshotById, type CatalogAuth } from '../src/index.ts';
import { catalogOptions, oauth2, stack, uniqueName } from './support.ts';

const schema = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'label', required: false, type: 'string' },
  ],
};

async function tokenFromOAuthEndpoint(): Promise<string> {
  const s = stack();
  const response = await fetch(`${s.uri}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: s.accessKeyId, client_secret: s.secretAccessKey }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { access_token: string };
  return body.access_token;
}

async function expectKind(promise: Promise<unknown>, kind: IcebergError['kind']): Promise<IcebergError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IcebergError);
  expect((error as IcebergError).kind).toBe(kind);
  return error as IcebergError;
}

const authMethods: Array<[string, () => Promise<CatalogAuth>]> = [
  ['oauth2 client credentials', async () => oauth2()],
  [
    'sigv4 (s3)',
    async () => {
      const s = stack();
      return { type: 'sigv4', accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey, region: s.region, service: 's3' };
    },
  ],
  [
    'sigv4 (s3tables)',
    async () => {
      const s = stack();
      return { type: 'sigv4', accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey, region: s.region, service: 's3tables' };
    },
  ],
  ['static bearer', async () => ({ type: 'bearer', token: await tokenFromOAuthEndpoint() })],
];

describe.each(authMethods)('REST catalog with %s', (_label, makeAuth) => {
  const namespace = uniqueName('it_cat');
  let catalog: RestCatalog;

  beforeAll(async () => {
    catalog = await RestCatalog.connect(catalogOptions(await makeAuth()));
  });

  afterAll(async () => {
    for (const table of await catalog.listTables(namespace).catch(() => [])) {
      await catalog.dropTable({ namespace, name: table.name }, { purge: true });
    }
    await catalog.dropNamespace(namespace).catch(() => undefined);
  });

  it('reads the prefix from /v1/config', () => {
    expect(catalog.prefix).toBe('warehouse');
  });

  it('creates, lists, loads and drops a table', async () => {
    expect(await catalog.namespaceExists(namespace)).toBe(false);
    await catalog.createNamespace(namespace, { owner: 'tests' });
    expect(await catalog.namespaceExists(namespace)).toBe(true);
    expect(await catalog.listNamespaces()).toContainEqual([namespace]);
    await expectKind(catalog.createNamespace(namespace), 'already_exists');
    expect(await catalog.ensureNamespace(namespace)).toBe(false);

    const created = await catalog.createTable(namespace, 'events', { schema });
    expect(created.metadata['format-version']).toBe(2);
    expect(created.metadata.location).toMatch(/^s3:\/\//);
    expect(branchHeadId(created.metadata)).toBeNull();

    expect(await catalog.listTables(namespace)).toEqual([{ namespace: [namespace], name: 'events' }]);
    expect(await catalog.tableExists({ namespace, name: 'events' })).toBe(true);
    const loaded = await catalog.loadTable({ namespace, name: 'events' });
    expect(loaded.metadata['table-uuid']).toBe(created.metadata['table-uuid']);
    expect(loaded.metadata.schemas[0]?.fields.map((f) => f.name)).toEqual(['id', 'label']);

    await catalog.dropTable({ namespace, name: 'events' }, { purge: true });
    expect(await catalog.tableExists({ namespace, name: 'events' })).toBe(false);
    await expectKind(catalog.loadTable({ namespace, name: 'events' }), 'not_found');
  });
});

describe('REST catalog errors and ids', () => {
  const namespace = uniqueName('it_cat');
  let catalog: RestCatalog;

  beforeAll(async () => {
    catalog = await RestCatalog.connect(catalogOptions());
    await catalog.createNamespace(namespace);
  });

  afterAll(async () => {
    for (const table of await catalog.listTables(namespace)) {
      await catalog.dropTable({ namespace, name: table.name }, { purge: true });
    }
    await catalog.dropNamespace(namespace);
  });

  it('answers not_found for a missing table, namespace and commit target', async () => {
    const missing = await expectKind(catalog.loadTable({ namespace, name: 'nope' }), 'not_found');
    expect(missing.status).toBe(404);
    await expectKind(catalog.dropNamespace(uniqueName('missing')), 'not_found');
    await expectKind(catalog.commitTable({ namespace, name: 'nope' }, { requirements: [], updates: [] }), 'not_found');
  });

  it('rejects bad OAuth2 client credentials as unauthorized', async () => {
    const s = stack();
    const bad = await RestCatalog.connect({
      ...catalogOptions({ type: 'oauth2', clientId: s.accessKeyId, clientSecret: 'not-the-secret' }),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(bad).toBeInstanceOf(IcebergError);
    expect((bad as IcebergError).kind).toBe('unauthorized');
  });

  it('caches the OAuth2 token and fetches a new one shortly before it expires', async () => {
    let tokenRequests = 0;
    const counting: typeof fetch = (input, init) => {
      if (String(input).endsWith('/v1/oauth/tokens')) tokenRequests += 1;
      return fetch(input, init);
    };
    const counted = await RestCatalog.connect({ ...catalogOptions(), fetch: counting });
    await counted.listNamespaces();
    await Promise.all([counted.namespaceExists(namespace), counted.listTables(namespace)]);
    expect(tokenRequests).toBe(1);
    // The catalog issues one-hour tokens; a minute before expiry the client fetches anew.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 3_550_000);
      await counted.listNamespaces();
      expect(tokenRequests).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects a forged bearer token as unauthorized', async () => {
    const forged = await RestCatalog.connect(catalogOptions({ type: 'bearer', token: 'not-a-token' }));
    await expectKind(forged.listNamespaces(), 'unauthorized');
  });

  it('answers unavailable when nothing listens', async () => {
    await expectKind(RestCatalog.connect({ uri: 'http://127.0.0.1:9', auth: { type: 'none' } }), 'unavailable');
  });

  it('signs requests the object store accepts, and a wrong secret is refused', async () => {
    // The catalog under mini defaults does not enforce signatures, the S3 port does: the
    // same signer proves its signatures there.
    const s = stack();
    const status = async (secretAccessKey: string): Promise<number> => {
      const auth = createAuthProvider(
        { type: 'sigv4', accessKeyId: s.accessKeyId, secretAccessKey, region: s.region, service: 's3' },
        { uri: s.s3Endpoint, timeoutMs: 5_000, fetch },
      );
      const url = new URL(`${s.s3Endpoint}/`);
      const headers = await auth.authorize({ method: 'GET', url, headers: {}, body: undefined });
      return (await fetch(url, { headers })).status;
    };
    expect(await status(s.secretAccessKey)).toBe(200);
    expect(await status('not-the-secret')).toBe(403);
  });

  it('round-trips a 63-bit snapshot id through commit and load', async () => {
    const created = await catalog.createTable(namespace, 'ids', { schema });
    const table = { namespace, name: 'ids' };
    const id = 8333333333333333333n;
    const committed = await catalog.commitTable(table, {
      requirements: [
        { type: 'assert-table-uuid', uuid: created.metadata['table-uuid'] },
        { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null },
      ],
      updates: [
        {
          action: 'add-snapshot',
          snapshot: {
            'snapshot-id': id,
            'sequence-number': 1,
            'timestamp-ms': Date.now(),
            'manifest-list': `${created.metadata.location}/metadata/snap-${id}-1-00000000-0000-0000-0000-000000000000.avro`,
            summary: { operation: 'append' },
            'schema-id': created.metadata['current-schema-id'],
          },
        },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
      ],
    });
    expect(branchHeadId(committed.metadata)).toBe(id);
    const loaded = await catalog.loadTable(table);
    expect(branchHeadId(loaded.metadata)).toBe(id);
    expect(loaded.metadata['current-snapshot-id']).toBe(id);
    expect(snapshotById(loaded.metadata, id)?.['snapshot-id']).toBe(id);

    // The head moved, so asserting the old (empty) head is a lost race.
    const conflict = await expectKind(
      catalog.commitTable(table, {
        requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
        updates: [{ action: 'set-properties', updates: { k: 'v' } }],
      }),
      'commit_conflict',
    );
    expect(conflict.retryable).toBe(true);
    expect(conflict.status).toBe(409);
  });
});
