import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCertificates {
  /** The private CA's certificate: what a roller trusts with TABLEMERE_INTERNAL_CA_FILE. */
  caFile: string;
  /** The server's certificate (for 127.0.0.1 and localhost, signed by the CA) and its key. */
  certFile: string;
  keyFile: string;
  /** Another CA, which signed nothing here. */
  otherCaFile: string;
}

/** A throwaway CA of its own in `dir`, with `openssl`. */
async function makeCa(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}.key`);
  await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=tablemere test ${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { cert, key };
}

/**
 * A throwaway private CA and a server certificate it signed for 127.0.0.1 and localhost (CN and
 * subjectAltName), as an operator would make for the internal listener; plus an unrelated CA.
 */
export async function makeCertificates(dir: string): Promise<TestCertificates> {
  const ca = await makeCa(dir, 'ca');
  const other = await makeCa(dir, 'other-ca');
  const keyFile = path.join(dir, 'server.key');
  const csr = path.join(dir, 'server.csr');
  const certFile = path.join(dir, 'server.pem');
  const extensions = path.join(dir, 'server.ext');
  writeFileSync(extensions, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n');
  await run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', '/CN=127.0.0.1']);
  await run('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', certFile, '-days', '2', '-extfile', extensions]);
  return { caFile: ca.cert, certFile, keyFile, otherCaFile: other.cert };
}
