import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretBoxError } from './secrets.ts';

const box = SecretBox.fromBase64(randomBytes(32).toString('base64'));

describe('SecretBox', () => {
  it('gives a different ciphertext per call and opens each', () => {
    const a = box.seal('adminsecret', 'warehouse:1:auth');
    const b = box.seal('adminsecret', 'warehouse:1:auth');
    expect(a.equals(b)).toBe(false);
    expect(a.includes(Buffer.from('adminsecret'))).toBe(false);
    expect(box.open(a, 'warehouse:1:auth')).toBe('adminsecret');
    expect(box.open(b, 'warehouse:1:auth')).toBe('adminsecret');
  });

  it('refuses another context, another key and a tampered value', () => {
    const sealed = box.seal('token', 'warehouse:1:auth');
    expect(() => box.open(sealed, 'warehouse:2:auth')).toThrow(SecretBoxError);
    expect(() => SecretBox.fromBase64(randomBytes(32).toString('base64')).open(sealed, 'warehouse:1:auth')).toThrow(SecretBoxError);
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => box.open(tampered, 'warehouse:1:auth')).toThrow(SecretBoxError);
  });

  it('insists on a 32-byte key', () => {
    expect(() => SecretBox.fromBase64(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});
