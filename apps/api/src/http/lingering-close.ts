import type { IncomingMessage } from 'node:http';

/** How long a connection answered before its request's body arrived still takes in that body. */
export const LINGER_MS = 2_000;

/**
 * Makes the close that follows an early answer (one given before the request's body was read:
 * a bad key, a cap, a body over the limit) lose nothing of that answer. A socket closed with
 * bytes unread makes the kernel reset the connection, and a client still writing its body then
 * sees a failed write (EPIPE, ECONNRESET) instead of the answer, e.g. instead of a 413 for a body
 * too large. So once the answer is out, the socket shuts its sending side (the client reads the
 * answer and then the end), drops what the client still sends, and closes when the request has
 * ended or after `lingerMs`, whichever comes first: the rest of a large body is read for at most
 * that long, never waited for in full (nginx calls this a lingering close).
 */
export function lingerOnClose(request: IncomingMessage, lingerMs = LINGER_MS): void {
  const socket = request.socket;
  // A socket of inject() (light-my-request) has none: nothing to close there.
  if (typeof socket.destroySoon !== 'function') return;
  const closeAtOnce = socket.destroySoon.bind(socket);
  // Node calls destroySoon once the answer that says `Connection: close` is written. A body
  // that arrived whole meanwhile leaves nothing unread: then the connection closes at once.
  socket.destroySoon = () => {
    if (request.complete) return closeAtOnce();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs).unref();
    socket.once('close', () => clearTimeout(timer));
    request.once('end', () => socket.destroy());
    request.resume();
  };
}
