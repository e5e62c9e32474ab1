import { describe, expect, it } from 'vitest';
import { errorFromResponse, errorFromTransport, kindForStatus } from './status.ts';

describe('status to error kind', () => {
  it('reads 409 as a lost race on commit and as a duplicate elsewhere', () => {
    expect(kindForStatus(409, 'commit')).toBe('commit_conflict');
    expect(kindForStatus(409, 'create')).toBe('already_exists');
  });

  it('reads any 5xx on a commit as an unknown outcome', () => {
    for (const status of [500, 502, 503, 504]) expect(kindForStatus(status, 'commit')).toBe('commit_state_unknown');
  });

  it('separates gateway failures from server errors outside commits', () => {
    expect(kindForStatus(503, 'read')).toBe('unavailable');
    expect(kindForStatus(502, 'other')).toBe('unavailable');
    expect(kindForStatus(500, 'read')).toBe('server_error');
  });

  it('maps the client errors', () => {
    expect(kindForStatus(404, 'read')).toBe('not_found');
    expect(kindForStatus(401, 'read')).toBe('unauthorized');
    expect(kindForStatus(419, 'read')).toBe('unauthorized');
    expect(kindForStatus(403, 'commit')).toBe('forbidden');
    expect(kindForStatus(400, 'commit')).toBe('bad_request');
  });

  it('keeps status and server type, and marks only conflicts and outages retryable', () => {
    const error = errorFromResponse(409, { error: { message: 'Requirement failed', type: 'CommitFailedException', code: 409 } }, 'commit', 'commit t');
    expect(error).toMatchObject({ kind: 'commit_conflict', status: 409, serverType: 'CommitFailedException', retryable: true });
    expect(errorFromResponse(500, undefined, 'commit', 'commit t').retryable).toBe(false);
  });

  it('treats a refused connection as never sent, and a timeout during commit as unknown', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    expect(errorFromTransport(refused, 'commit', 'commit t').kind).toBe('unavailable');
    const timeout = new DOMException('timed out', 'TimeoutError');
    expect(errorFromTransport(timeout, 'commit', 'commit t').kind).toBe('commit_state_unknown');
    expect(errorFromTransport(timeout, 'read', 'load t').kind).toBe('unavailable');
  });
});

describe('error bodies', () => {
  it('reads the spec shape and the top-level shape alike', () => {
    const spec = errorFromResponse(400, { error: { message: 'Namespace does not exist: x', type: 'NoSuchNamespaceException', code: 400 } }, 'read', 'load t');
    expect(spec.message).toBe('load t: HTTP 400 Namespace does not exist: x');
    expect(spec.serverType).toBe('NoSuchNamespaceException');
    // Iceberg's reference server on an unexpected failure.
    const flat = errorFromResponse(500, { message: 'Cannot parse missing int: spec-id', type: 'IllegalArgumentException', code: 500 }, 'create', 'create t');
    expect(flat.message).toBe('create t: HTTP 500 Cannot parse missing int: spec-id');
    expect(flat).toMatchObject({ kind: 'server_error', serverType: 'IllegalArgumentException' });
    expect(errorFromResponse(502, '<html>', 'read', 'load t').message).toBe('load t: HTTP 502');
  });
});
