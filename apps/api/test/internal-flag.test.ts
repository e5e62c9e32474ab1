import { Connection, InternalSinkList } from '@tablemere/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/harness.ts';
import { injectJson, insertBatches, insertSink, startInternalTestApi, type InternalTestApi } from './support/internal-harness.ts';

let api: InternalTestApi;

beforeAll(async () => {
  api = await startInternalTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('TABLEMERE_SINKS_ENABLED', () => {
  it('on: /v1/connection names the send route and says how to use it', async () => {
    const res = await call(api.app, 'GET', '/v1/connection', { key: api.adminKey });
    expect(res.status, res.text).toBe(200);
    const connection = Connection.parse(res.body);
    expect(connection.ingest_url).toBe('http://api.test:8787/v1/sinks/{sink_id}');
    expect(connection.sinks_note).toMatch(/send key/);
    expect(connection.sinks_note).toMatch(/Idempotency-Key/);
  });

  it('off: the roller is told to idle, /v1/sinks routes are 404, /v1/connection says nothing of sinks', async () => {
    const sinkId = await insertSink(api.pool, api, { roll_seconds: 60 });
    await insertBatches(api.pool, sinkId, [{ batch_id: 'old', age_seconds: 3600 }]);
    const off = api.variant({ sinksEnabled: false });

    for (const url of ['/internal/sinks', '/internal/sinks?due=true']) {
      const res = await injectJson(off.internal, 'GET', url, { authorization: `Bearer ${api.secret}` });
      expect(res.status, res.text).toBe(200);
      expect(InternalSinkList.parse(res.body)).toMatchObject({ enabled: false, sinks: [] });
    }
    // The same database with sinks on shows the due sink.
    const on = InternalSinkList.parse((await api.callInternal('GET', '/internal/sinks?due=true')).body);
    expect(on.sinks.map((s) => s.id)).toContain(sinkId);

    for (const [method, url] of [
      ['GET', '/v1/sinks'],
      ['POST', '/v1/sinks'],
      ['GET', `/v1/sinks/${sinkId}`],
      ['DELETE', `/v1/sinks/${sinkId}`],
      ['POST', `/v1/sinks/${sinkId}`],
      ['GET', `/v1/sinks/${sinkId}/batches/b1`],
    ] as const) {
      const res = await call(off.app, method, url, { key: api.adminKey, ...(method === 'POST' ? { body: [] } : {}) });
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }

    const connection = await call(off.app, 'GET', '/v1/connection', { key: api.adminKey });
    expect(connection.status).toBe(200);
    expect(connection.body).not.toHaveProperty('sinks_note');
    expect(connection.body).not.toHaveProperty('ingest_url');
  });
});
