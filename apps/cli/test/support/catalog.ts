import { RestCatalog } from '@tablemere/iceberg';
import { stackEnv } from '../../../../tests/support/stack.ts';

/** Drops a namespace the tests made in the shared catalog, with its tables and their files. */
export async function dropNamespace(namespace: string): Promise<void> {
  const env = stackEnv();
  const catalog = await RestCatalog.connect({
    uri: env.ICEBERG_REST_URI!,
    warehouse: env.ICEBERG_WAREHOUSE!,
    auth: { type: 'oauth2', clientId: env.AWS_ACCESS_KEY_ID!, clientSecret: env.AWS_SECRET_ACCESS_KEY! },
  });
  for (const table of await catalog.listTables(namespace)) {
    await catalog.dropTable({ namespace, name: table.name }, { purge: true });
  }
  await catalog.dropNamespace(namespace);
}
