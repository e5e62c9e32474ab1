import pino, { type DestinationStream, type Logger } from 'pino';

/** Field names whose values never reach a log line, at the top level or one level down. */
const SECRET_FIELDS = ['authorization', 'secret', 'token', 'password', 'client_secret', 'secret_access_key', 'clientSecret', 'secretAccessKey', 'sessionToken'];

/** The roller's pino logger: JSON lines, secrets redacted. */
export function createLogger(options: { level?: string; destination?: DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'tablemere-roller' },
      redact: { paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`)], censor: '[redacted]' },
    },
    options.destination ?? pino.destination(1),
  );
}
