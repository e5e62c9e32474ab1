import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { RestCatalog } from '@tablemere/iceberg';
import type { BootstrapOptions } from '../../apps/api/src/bootstrap.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** `.stack/env`, or `$TABLEMERE_STACK_DIR/env` for a stack kept elsewhere. */
export const stackEnvFile = path.join(process.env.TABLEMERE_STACK_DIR ? path.resolve(process.env.TABLEMERE_STACK_DIR) : path.join(repoRoot, '.stack'), 'env');

/** Parses the `export NAME='value'` lines the local stack writes. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z0-9_]+)='((?:[^']|'\\'')*)'$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!.replaceAll(`'\\''`, `'`);
  }
  return env;
}

/**
 * The running stack's variables. Integration tests call this and fail loudly when the
 * stack is missing: they never skip.
 */
export function stackEnv(): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(stackEnvFile, 'utf8');
  } catch {
    throw new Error(`the local stack is not running (${stackEnvFile} is missing): run \`npm start\` or \`npm test\``);
  }
  return parseEnvFile(text);
}

/**
 * How the tests authenticate to the catalog: OAuth2 with the stack's key pair, unless
 * ICEBERG_REST_AUTH=none (Nessie as the stack runs it has no authentication).
 */
function catalogAuth(env: Record<string, string>) {
  return env.ICEBERG_REST_AUTH === 'none'
    ? { type: 'none' as const }
    : { type: 'oauth2' as const, clientId: env.AWS_ACCESS_KEY_ID!, clientSecret: env.AWS_SECRET_ACCESS_KEY! };
}

/** The running stack's catalog as the tests' own client. */
export function stackCatalog(env: Record<string, string> = stackEnv()): Promise<RestCatalog> {
  return RestCatalog.connect({ uri: env.ICEBERG_REST_URI!, warehouse: env.ICEBERG_WAREHOUSE!, auth: catalogAuth(env) });
}

/** The stack's catalog registered as warehouse `garden`, as bootstrap takes it. */
export function stackWarehouse(env: Record<string, string> = stackEnv()): BootstrapOptions['warehouse'] {
  return {
    name: 'garden',
    restUri: env.ICEBERG_REST_URI!,
    warehouse: env.ICEBERG_WAREHOUSE!,
    auth: catalogAuth(env),
    s3: { endpoint: env.AWS_ENDPOINT_URL!, region: env.AWS_REGION!, accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
  };
}

/** Drops test namespaces with every table in them (and their files); what is gone already is fine. */
export async function dropNamespaces(catalog: RestCatalog, namespaces: readonly string[]): Promise<void> {
  for (const namespace of namespaces) {
    for (const table of await catalog.listTables(namespace).catch(() => [])) {
      await catalog.dropTable({ namespace, name: table.name }, { purge: true }).catch(() => undefined);
    }
    await catalog.dropNamespace(namespace).catch(() => undefined);
  }
}
