import { randomBytes } from 'node:crypto';
import { stackEnv } from '../../../tests/support/stack.ts';
import type { CatalogAuth, RestCatalogOptions } from '../src/index.ts';

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
