import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SEND_KEY_PATTERN } from '@tablemere/contracts';

/**
 * Send keys: `al_send_<the sink id's 12 hex>_<32 random bytes, base64url>`. The sink row
 * keeps only the SHA-256 of the whole key; the key is not a principal and opens exactly one
 * route (POST /v1/sinks/{sink_id}) of exactly one sink.
 */

/** A new sink id and its send key. */
export function generateSinkCredentials(): { sinkId: string; sendKey: string } {
  const hex = randomBytes(6).toString('hex');
  return { sinkId: `snk_${hex}`, sendKey: `al_send_${hex}_${randomBytes(32).toString('base64url')}` };
}

export function sendKeyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Whether `presented` is the key whose digest is `stored`; constant-time in the digest. */
export function sendKeyMatches(presented: string, stored: Buffer): boolean {
  return timingSafeEqual(sendKeyDigest(presented), stored);
}

export function isSendKey(token: string): boolean {
  return SEND_KEY_PATTERN.test(token);
}
