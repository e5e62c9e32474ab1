import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAuthProvider } from './auth.ts';
import { RestTransport } from './http.ts';

/** A token endpoint and a catalog route in one fetch: tokens t1, t2, ...; the route accepts only `valid`. */
function fakeCatalog(options: { expiresIn?: number; valid: () => string }) {
  let issued = 0;
  const calls: string[] = [];
  const fetchImpl = (async (input: URL | string, init?: RequestInit) => {
    const url = String(input);
    if (url.endsWith('/v1/oauth/tokens')) {
      issued += 1;
      calls.push('token');
      return Response.json({ access_token: `t${issued}`, token_type: 'bearer', ...(options.expiresIn ? { expires_in: options.expiresIn } : {}) });
    }
    const authorization = new Headers(init?.headers).get('authorization');
    calls.push(`route ${authorization}`);
    if (authorization !== `Bearer ${options.valid()}`) return Response.json({ error: { message: 'Not authorized', type: 'NotAuthorizedException', code: 401 } }, { status: 401 });
    return Response.json({ ok: true });
  }) as typeof fetch;
  return { fetchImpl, calls };
}

const credentials = { type: 'oauth2' as const, clientId: 'id', clientSecret: 'secret' };
const read = { method: 'GET' as const, path: '/v1/config', operation: 'read' as const, what: 'read config' };

function transport(fetchImpl: typeof fetch) {
  const context = { uri: 'http://catalog.test', timeoutMs: 1000, fetch: fetchImpl };
  return new RestTransport({ ...context, auth: createAuthProvider(credentials, context), headers: {} });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('OAuth2 client credentials', () => {
  it('fetches a new token ahead of the old one expiring', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    let valid = 't1';
    const { fetchImpl, calls } = fakeCatalog({ expiresIn: 100, valid: () => valid });
    const client = transport(fetchImpl);
    await client.send(read);
    await client.send(read);
    expect(calls).toEqual(['token', 'route Bearer t1', 'route Bearer t1']);
    // 100 s lifetime, refreshed 10 s early.
    vi.setSystemTime(1_000_000 + 91_000);
    valid = 't2';
    await client.send(read);
    expect(calls.slice(3)).toEqual(['token', 'route Bearer t2']);
  });

  it('re-authenticates once after a 401 and retries the request', async () => {
    let valid = 't1';
    const { fetchImpl, calls } = fakeCatalog({ valid: () => valid });
    const client = transport(fetchImpl);
    await client.send(read);
    // The catalog revoked t1 before its expiry.
    valid = 't2';
    await expect(client.send(read)).resolves.toMatchObject({ status: 200 });
    expect(calls).toEqual(['token', 'route Bearer t1', 'route Bearer t1', 'token', 'route Bearer t2']);
  });

  it('gives up after one retry when the fresh token is refused too', async () => {
    const { fetchImpl, calls } = fakeCatalog({ valid: () => 'never' });
    await expect(transport(fetchImpl).send(read)).rejects.toMatchObject({ kind: 'unauthorized', status: 401, message: 'read config: HTTP 401 Not authorized' });
    expect(calls).toEqual(['token', 'route Bearer t1', 'token', 'route Bearer t2']);
  });
});
