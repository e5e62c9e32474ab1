import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Paths pino replaces with "[redacted]": the Authorization header wherever a request is
 * logged, and any field named like a key or secret at the top level or one level down.
 * Request and response bodies are never logged at all.
 */
const SECRET_FIELDS = [
  'authorization',
  'key',
  'secret',
  'token',
  'password',
  'client_secret',
  'secret_access_key',
  'clientSecret',
  'secretAccessKey',
  'secretKey',
  'bootstrapSecret',
];

export const REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
];

export interface LoggerOptions {
  level?: string;
  /** Where lines go; stdout by default. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

/** The API's pino logger: JSON lines, secrets redacted. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'tablemere-api' },
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    },
    options.destination ?? pino.destination(1),
  );
}
