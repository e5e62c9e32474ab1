import { z } from 'zod';

/**
 * Every non-2xx answer: `{"error": {"code", "message", ...details}}`. `code` is a stable
 * snake_case identifier to branch on; details (e.g. `issues`, `tables`, `request_id`) vary
 * by code, so the object is loose and codes are not enumerated here: a client must cope with
 * codes added later.
 */
export const ErrorBody = z.object({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
  }),
});

export type ErrorBody = z.infer<typeof ErrorBody>;

/** One zod issue as `invalid_request` lists it. */
export const RequestIssue = z.object({
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
  code: z.string(),
});

export type RequestIssue = z.infer<typeof RequestIssue>;
