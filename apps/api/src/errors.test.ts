import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApiError, ERROR_CODES } from './errors.ts';

describe('error registry', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  it.each(Object.entries(ERROR_CODES))('documents %s with its status in the README', (code, { status }) => {
    expect(readme).toMatch(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
  });

  it('uses snake_case codes and messages that say what to do', () => {
    for (const [code, { message }] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(message).toMatch(/[.;]/);
      expect(new ApiError(code as keyof typeof ERROR_CODES).message).toBe(message);
    }
  });
});
