import type { z } from 'zod';
import { invalidRequest } from '../errors.ts';

/** Validates one part of a request with its contract schema; 400 invalid_request otherwise. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, part: 'body' | 'params' | 'query'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(result.error, part);
  return result.data;
}
