import { createHash, timingSafeEqual } from 'node:crypto';

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '')?.[1];
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether an Authorization header carries `secret` as its bearer token (the internal secret, the
 * metrics token). Both sides are hashed first, so the comparison takes the same time whatever
 * the length or content of what was sent.
 */
export function carriesBearer(header: string | undefined, secret: string): boolean {
  const given = bearerToken(header);
  return given !== undefined && timingSafeEqual(digest(given), digest(secret));
}
