import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** The internal listener's certificate (chain) and private key, PEM text. */
export interface InternalTls {
  cert: string;
  key: string;
}

/**
 * Reads the internal listener's certificate and key files at start-up and checks that they
 * make a TLS context (PEM, and a key that matches the certificate). The problem, when there is
 * one, names the variable, the file and what failed: never the files' content.
 */
export function readInternalTls(certFile: string, keyFile: string): { tls: InternalTls } | { problem: string } {
  const read = (variable: string, file: string): string | { problem: string } => {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      return { problem: `${variable} names ${file}, which cannot be read (${code})` };
    }
  };
  const cert = read('TABLEMERE_INTERNAL_TLS_CERT_FILE', certFile);
  if (typeof cert !== 'string') return cert;
  const key = read('TABLEMERE_INTERNAL_TLS_KEY_FILE', keyFile);
  if (typeof key !== 'string') return key;
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    // OpenSSL's reasons ("no start line", "key values mismatch") name no content.
    const reason = error instanceof Error ? error.message : String(error);
    return { problem: `TABLEMERE_INTERNAL_TLS_CERT_FILE (${certFile}) and TABLEMERE_INTERNAL_TLS_KEY_FILE (${keyFile}) are not a PEM certificate and its private key: ${reason}` };
  }
  return { tls: { cert, key } };
}
