import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
  return { logger, lines };
}

describe('createLogger', () => {
  it('redacts the Authorization header and secret-named fields', () => {
    const { logger, lines } = capture();
    logger.info({ req: { headers: { authorization: 'Bearer tm_key_abc' } } }, 'request');
    logger.info({ key: 'tm_key_x', auth: { client_secret: 's1', token: 't1' }, s3: { secret_access_key: 's2' } }, 'values');
    logger.info({ config: { secretKey: 'k1', bootstrapSecret: 'b1' } }, 'config');
    const text = lines.join('');
    for (const secret of ['tm_key_abc', 'tm_key_x', 's1', 't1', 's2', 'k1', 'b1']) expect(text).not.toContain(`"${secret}"`);
    expect(text.match(/\[redacted\]/g)?.length).toBe(7);
  });
});
