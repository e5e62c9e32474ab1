/**
 * Integration tests run against the real local stack: reuse the one `npm start` runs (or any stack
 * described by a live `.stack/env`), otherwise start one for this run and stop it afterwards.
 * A stack that cannot start fails the run loudly. The JVM catalogs (Iceberg's reference server,
 * Nessie) start here once per run, beside the stack, when the run includes the catalog tests.
 */
import { existsSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startStack, stackPaths, jvmCatalogOptions } from '../scripts/stack/index.ts';
import { startJvmCatalog, type CatalogEndpoint, type JvmCatalogName } from '../scripts/stack/jvm-catalogs.ts';
import { stackPorts } from '../scripts/stack/ports.ts';
import { repoRoot, stackEnv } from './support/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The JVM catalogs of this run, by name; absent when the run does not include their tests. */
    jvmCatalogs: Partial<Record<JvmCatalogName, CatalogEndpoint>>;
  }
}

/** The test files that use the JVM catalogs. */
const CATALOG_TESTS = ['apps/roller/test/catalogs.test.ts'];

async function liveStackEnv(envFile: string): Promise<boolean> {
  if (!existsSync(envFile)) return false;
  const endpoint = stackEnv().AWS_ENDPOINT_URL;
  if (!endpoint) return false;
  try {
    const res = await fetch(`${endpoint}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** Whether this run includes a catalog test: no file filter on the command line, or one that matches. */
function runIncludesCatalogTests(): boolean {
  const filters = process.argv.slice(2).filter((arg) => !arg.startsWith('-') && !['run', 'watch', 'dev'].includes(arg));
  return filters.length === 0 || filters.some((filter) => CATALOG_TESTS.some((file) => file.includes(filter.replace(/^\.\//, ''))));
}

/** Starts the JVM catalogs the stack does not run already, both at once; answers how to stop them. */
async function startJvmCatalogs(project: TestProject): Promise<() => Promise<void>> {
  const env = stackEnv();
  const paths = stackPaths(repoRoot, process.env.TABLEMERE_STACK_DIR);
  // The stack's own offset, whoever started it: its S3 port less the default.
  const ports = stackPorts(Number(new URL(env.AWS_ENDPOINT_URL!).port) - stackPorts().s3);
  const store = { endpoint: env.AWS_ENDPOINT_URL!, region: env.AWS_REGION!, accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! };
  const names: JvmCatalogName[] = ['reference', 'nessie'];
  const startedAt = Date.now();
  const results = await Promise.allSettled(
    names.map(async (name) => {
      if (env.TABLEMERE_CATALOG === name) {
        const endpoint: CatalogEndpoint = { name, uri: env.ICEBERG_REST_URI!, warehouse: env.ICEBERG_WAREHOUSE!, auth: name === 'nessie' ? 'none' : 'oauth2' };
        return { endpoint, stop: async () => {} };
      }
      const catalog = await startJvmCatalog(name, jvmCatalogOptions(repoRoot, paths, ports, name, store));
      return { endpoint: catalog.endpoint, stop: () => catalog.proc.stop() };
    }),
  );
  const running = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async () => {
    for (const { stop } of running) await stop();
  };
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const catalogs = Object.fromEntries(running.map(({ endpoint }) => [endpoint.name, endpoint]));
  console.log(`[stack] JVM catalogs ready in ${Date.now() - startedAt} ms: ${Object.values(catalogs).map((c) => `${c.name} ${c.uri}`).join(', ')}`);
  project.provide('jvmCatalogs', catalogs);
  return stopAll;
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const paths = stackPaths(repoRoot, process.env.TABLEMERE_STACK_DIR);
  let stopStack: (() => Promise<void>) | undefined;
  if (await liveStackEnv(paths.envFile)) {
    console.log('[stack] using the running local stack');
  } else {
    const stack = await startStack({
      root: repoRoot,
      dir: process.env.TABLEMERE_STACK_DIR,
      portOffset: Number(process.env.TABLEMERE_STACK_PORT_OFFSET ?? 0),
      databaseUrl: process.env.DATABASE_URL,
      say: (line) => console.log(`[stack] ${line}`),
    });
    console.log(`[stack] ready in ${stack.timings.total} ms ${JSON.stringify(stack.timings)}`);
    stopStack = () => stack.stop();
  }
  project.provide('jvmCatalogs', {});
  let stopCatalogs: (() => Promise<void>) | undefined;
  try {
    if (runIncludesCatalogTests()) stopCatalogs = await startJvmCatalogs(project);
  } catch (error) {
    await stopStack?.();
    throw error;
  }
  if (!stopStack && !stopCatalogs) return undefined;
  return async () => {
    await stopCatalogs?.();
    await stopStack?.();
  };
}
