import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { exactJson } from '../api-client.ts';
import { CliError, type CliErrorKind, type ErrorDetail } from '../errors.ts';

/** Codes for failures the API did not answer itself (no API call, or no answer from it). */
const codeOfKind: Readonly<Record<CliErrorKind, string>> = {
  refused: 'refused',
  usage: 'invalid_input',
  unavailable: 'api_unavailable',
  internal: 'internal',
  rows_refused: 'rows_refused',
};

/** A refusal of the tools' own (no key for a tool, retry later), coded like the API's errors. */
export function toolRefusal(code: string, message: string, kind: CliErrorKind = 'usage'): CliError {
  return new CliError(kind, `${code}: ${message}`, { code, message });
}

/**
 * A tool's answer, checked by the SDK against the tool's outputSchema: `structuredContent` for
 * hosts that read it, and the same value as JSON text for those that do not (MCP's advice).
 * The text has every number as the API sent it; the structured copy is plain JSON, where a
 * row's number past what a double holds exactly is rounded.
 */
export function answer(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: exactJson(value, 2) }], structuredContent: JSON.parse(exactJson(value)) as Record<string, unknown> };
}

/**
 * A failure as an MCP tool error (`isError`), its text the API's own envelope: `{"error":
 * {"code", "message"}}` with the API's code and message when it answered one.
 */
export function refusal(error: unknown): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: detailOf(error) }) }] };
}

export function detailOf(error: unknown): ErrorDetail {
  if (!(error instanceof CliError)) return { code: 'internal', message: `internal: ${error instanceof Error ? error.message : String(error)}` };
  return error.detail ?? { code: codeOfKind[error.kind], message: error.message };
}
