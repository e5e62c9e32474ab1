import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Layout of a sealed value: version (1 byte) | IV (12) | GCM tag (16) | ciphertext. */
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;

export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

/**
 * Seals secrets at rest with AES-256-GCM: a fresh random IV per value, and a context string
 * bound as additional data, so a sealed value copied to another row or column fails to open.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** `key` is 32 bytes in base64 (TABLEMERE_SECRET_KEY). */
  static fromBase64(key: string): SecretBox {
    const bytes = Buffer.from(key, 'base64');
    if (bytes.length !== 32) throw new SecretBoxError('the secret key must be 32 bytes in base64');
    return new SecretBox(bytes);
  }

  seal(plaintext: string, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
  }

  open(sealed: Buffer, context: string): string {
    if (sealed.length < HEADER_BYTES || sealed[0] !== VERSION) throw new SecretBoxError('sealed value has an unknown format');
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, HEADER_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]).toString('utf8');
    } catch (cause) {
      // Wrong key (TABLEMERE_SECRET_KEY changed) or a tampered/moved value.
      throw new SecretBoxError('sealed value does not open with this key and context', { cause });
    }
  }
}
