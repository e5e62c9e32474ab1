import { describe, expect, it } from 'vitest';
import type { LoadTableResult } from '../catalog/rest/types.ts';
import type { TableMetadata } from '../spec/metadata.ts';
import { s3FileIOForTable } from './table-io.ts';

function loaded(config: Record<string, string>, storageCredentials: LoadTableResult['storageCredentials'] = []): LoadTableResult {
  return { metadataLocation: undefined, metadata: { location: 's3://bucket/ns/t' } as TableMetadata, config, storageCredentials };
}

const fallback = { region: 'us-east-1', endpoint: 'http://127.0.0.1:8333', credentials: { accessKeyId: 'own', secretAccessKey: 'own-secret' } };

async function credentialsOf(io: ReturnType<typeof s3FileIOForTable>) {
  // The SDK resolves its credentials lazily: ask the client for them as a request would.
  const client = (io as unknown as { client: { config: { credentials: () => Promise<{ accessKeyId: string; sessionToken?: string }> } } }).client;
  return client.config.credentials();
}

describe('the FileIO for a table', () => {
  it('uses the longest matching vended storage credential, then the table config, then its own', async () => {
    const vended = loaded({ 's3.access-key-id': 'cfg', 's3.secret-access-key': 'cfg-secret' }, [
      { prefix: 's3://bucket/', config: { 's3.access-key-id': 'wide', 's3.secret-access-key': 'w' } },
      { prefix: 's3://bucket/ns/t', config: { 's3.access-key-id': 'narrow', 's3.secret-access-key': 'n', 's3.session-token': 'tok' } },
      { prefix: 's3://other/', config: { 's3.access-key-id': 'other', 's3.secret-access-key': 'o' } },
    ]);
    expect(await credentialsOf(s3FileIOForTable(vended, fallback))).toMatchObject({ accessKeyId: 'narrow', sessionToken: 'tok' });
    expect(await credentialsOf(s3FileIOForTable(loaded({ 's3.access-key-id': 'cfg', 's3.secret-access-key': 'c' }), fallback))).toMatchObject({ accessKeyId: 'cfg' });
    expect(await credentialsOf(s3FileIOForTable(loaded({}), fallback))).toMatchObject({ accessKeyId: 'own' });
  });

  it('refuses a catalog that wants remote signing when no credentials can sign', () => {
    const signing = loaded({ 's3.remote-signing-enabled': 'true', 's3.signer.uri': 'http://catalog/' });
    expect(() => s3FileIOForTable(signing, { region: 'us-east-1' })).toThrow(/remote signing/);
    // Credentials of its own still sign the writes.
    expect(() => s3FileIOForTable(signing, fallback)).not.toThrow();
  });
});
