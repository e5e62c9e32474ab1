import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_PATTERN, API_KEY_PREFIX, type ApiKey, type ApiKeyLevel, type CreatedKey, type RevokedKey } from '@tablemere/contracts';
import { query, queryOne, transaction, type Pool, type PoolClient, type Queryable } from '@tablemere/db';
import { apiError } from '../errors.ts';
import { recordAudit } from './audit.ts';
import type { Principal } from './principal.ts';

interface KeyRow {
  id: string;
  project_id: string;
  name: string;
  level: ApiKeyLevel;
  key_sha256: Buffer;
  created_at: Date;
  revoked_at: Date | null;
}

/** A new key: 6 random bytes as the public id, 32 random bytes as the secret. */
export function generateApiKey(): { id: string; key: string } {
  const id = randomBytes(6).toString('hex');
  return { id, key: `${API_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}` };
}

export function keyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function toApiKey(row: KeyRow): ApiKey {
  return { id: row.id, name: row.name, level: row.level, created_at: row.created_at.toISOString() };
}

/**
 * The principal for a presented key, or undefined when it is malformed, unknown, revoked or
 * wrong. The digest comparison is constant-time.
 */
export async function authenticate(db: Queryable, presented: string): Promise<Principal | undefined> {
  const match = API_KEY_PATTERN.exec(presented);
  if (!match) return undefined;
  const row = await queryOne<KeyRow>(db, 'SELECT * FROM api_keys WHERE id = $1 AND revoked_at IS NULL', [match[1]]);
  if (!row || !timingSafeEqual(row.key_sha256, keyDigest(presented))) return undefined;
  return { keyId: row.id, projectId: row.project_id, level: row.level };
}

/**
 * Stores a new key (its digest only) and its audit event, and returns it with the plaintext
 * key shown this once. Run it in a transaction, so the key and its event commit together.
 */
export async function createApiKey(
  db: PoolClient,
  projectId: string,
  input: { name: string; level: ApiKeyLevel },
  actorKeyId: string | null,
): Promise<CreatedKey> {
  const { id, key } = generateApiKey();
  const row = await queryOne<KeyRow>(
    db,
    'INSERT INTO api_keys (id, project_id, name, level, key_sha256) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [id, projectId, input.name, input.level, keyDigest(key)],
  );
  await recordAudit(db, { projectId, actorKeyId, event: 'key.create', subject: id, details: { name: input.name, level: input.level } });
  return { ...toApiKey(row!), key };
}

export async function listApiKeys(db: Queryable, projectId: string): Promise<ApiKey[]> {
  const rows = await query<KeyRow>(
    db,
    'SELECT * FROM api_keys WHERE project_id = $1 AND revoked_at IS NULL ORDER BY created_at, id',
    [projectId],
  );
  return rows.map(toApiKey);
}

/**
 * Revokes an active key of the caller's project. The project's last active admin key cannot
 * be revoked: nobody could manage the project afterwards.
 */
export async function revokeApiKey(pool: Pool, principal: Principal, id: string): Promise<RevokedKey> {
  return transaction(pool, async (client) => {
    // Locking the project's active keys serialises concurrent revocations of two admin keys.
    const active = await query<KeyRow>(
      client,
      'SELECT * FROM api_keys WHERE project_id = $1 AND revoked_at IS NULL ORDER BY id FOR UPDATE',
      [principal.projectId],
    );
    const target = active.find((row) => row.id === id);
    if (!target) throw apiError('key_not_found', { details: { id } });
    if (target.level === 'admin' && active.filter((row) => row.level === 'admin').length === 1) {
      throw apiError('last_admin_key', { details: { id } });
    }
    const revoked = await queryOne<KeyRow>(client, 'UPDATE api_keys SET revoked_at = now() WHERE id = $1 RETURNING *', [id]);
    await recordAudit(client, { projectId: principal.projectId, actorKeyId: principal.keyId, event: 'key.revoke', subject: id });
    return { ...toApiKey(revoked!), revoked_at: revoked!.revoked_at!.toISOString() };
  });
}
