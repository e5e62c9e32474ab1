import type { z } from 'zod';

/**
 * Every way a command can fail, as a closed set. Each kind has one exit code; the help text
 * documents them (see `exitCodeHelp`).
 */
export type CliErrorKind =
  /** The API answered 4xx: the request was understood and refused. */
  | 'refused'
  /** Bad flags, arguments, column types or input, or missing configuration; the API was not called. */
  | 'usage'
  /** The API could not be reached, timed out, failed (5xx) or answered something unreadable. */
  | 'unavailable'
  /** A fault inside the CLI itself. */
  | 'internal'
  /** `sink send` stored every batch, but some rows are not JSON objects (the roll rejects them). */
  | 'rows_refused';

export const exitCodes: Readonly<Record<CliErrorKind, number>> = Object.freeze({
  refused: 1,
  usage: 2,
  unavailable: 3,
  internal: 4,
  rows_refused: 5,
});

/** An error's stable code and message, as the API's error envelope carries them (`{"error": {"code", "message"}}`). */
export interface ErrorDetail {
  readonly code: string;
  readonly message: string;
}

export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    readonly kind: CliErrorKind,
    message: string,
    /** The API's code and message when it answered the error (or a code of the CLI's own), for callers that pass them on: the MCP tools. */
    readonly detail?: ErrorDetail,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError('usage', message);

/** The first problem zod found, as `path: message`, for a one-line report. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'no details';
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

export const exitCodeHelp = `
Exit codes:
  0  success
  1  the API refused the request (4xx); printed as "error: <code>: <message>"
  2  usage error: bad flags, arguments or column types, unreadable input, or no API
     URL/key configured (the API is not called)
  3  the API could not be reached, timed out, failed (5xx) or answered something unreadable
  4  internal error in tablemere itself
  5  sink send: every batch was stored, but some rows are not JSON objects (the
     roll rejects them as not_an_object); the totals say how many
Every failure ends with one line on stderr: "error: ..." (sink send prints its totals on
stdout first, and the first refused rows on stderr).`;
