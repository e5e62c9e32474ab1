import { describe, expect, it } from 'vitest';
import { isStorableText, StorableText, toStorableText } from './names.ts';

describe('storable text', () => {
  it('refuses NUL and lone surrogates, and keeps every other character', () => {
    for (const bad of ['\u0000', 'a\u0000', '\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '🚀'.slice(0, 1)]) expect(isStorableText(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ['', 'plain', 'é', '🚀', '\uffff', '\u202e', 'tab\tnew\nline']) expect(isStorableText(good), JSON.stringify(good)).toBe(true);
    expect(StorableText.safeParse('\ud800').success).toBe(false);
  });

  it('turns a message into storable text, also where the cut splits a surrogate pair', () => {
    expect(toStorableText('ab🚀', 3)).toBe('ab\ufffd');
    expect(toStorableText('a\u0000b\udfff', 100)).toBe('a\ufffdb\ufffd');
    expect(isStorableText(toStorableText('x\ud800'.repeat(10), 7))).toBe(true);
  });
});
