import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../errors.ts';

/** Node's parser and timeout errors on a connection, to our codes. */
function codeOf(error: { code?: string }): ErrorCode {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  return 'invalid_request';
}

/**
 * Answers what Node refuses before there is a request (malformed HTTP, headers too large, a
 * headers or request timeout) in our error shape with a registered code, logs it at info (a
 * client's fault), and closes the connection. Fastify's default answers in its own shape.
 */
export function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Duplex): void {
  // Reset by the peer, or already closed: nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = codeOf(error);
  const { status, message } = ERROR_CODES[code];
  const requestId = randomUUID();
  this.log.info({ request_id: requestId, code, status, reason: error.code }, 'request refused');
  const body = JSON.stringify({ error: { code, message, request_id: requestId } });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
