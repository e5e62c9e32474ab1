import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '@tablemere/store';
import { repoRoot, stackEnv } from '../../../../tests/support/stack.ts';
import { freePort } from '../../../../tests/support/ports.ts';

export interface PrivateStore {
  /** Like the stack's env, with this store's S3 and catalog and its admin credentials. */
  env: Record<string, string>;
  /** An identity that may read and list the store but not write or delete. */
  reader: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}


async function until(what: string, check: () => Promise<boolean>, child: ChildProcess, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`weed mini exited (${child.exitCode}) before ${what}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`weed mini: ${what} not ready in ${deadlineMs} ms`);
}

const ok = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;

/**
 * A SeaweedFS `weed mini` of its own (S3 + Iceberg catalog) whose S3 identities come from a
 * config file: the admin, and a reader without write or delete rights. For tests that need
 * the store itself to refuse something, with no change to the shared stack.
 */
export async function startPrivateStore(): Promise<PrivateStore> {
  const dir = mkdtempSync(path.join(tmpdir(), 'roller-store-'));
  const admin = { accessKeyId: 'storeadmin', secretAccessKey: 'storeadmin-secret' };
  const reader = { accessKeyId: 'storereader', secretAccessKey: 'storereader-secret' };
  const identity = (name: string, c: typeof admin, actions: string[]) => ({ name, credentials: [{ accessKey: c.accessKeyId, secretKey: c.secretAccessKey }], actions });
  writeFileSync(
    path.join(dir, 's3.json'),
    JSON.stringify({ identities: [identity('admin', admin, ['Admin', 'Read', 'Write', 'List', 'Tagging']), identity('reader', reader, ['Read', 'List'])] }),
  );
  const ports: Record<string, number> = {};
  for (const name of ['master', 'masterGrpc', 'volume', 'volumeGrpc', 'filer', 'filerGrpc', 's3', 's3Grpc', 'iceberg', 'admin', 'adminGrpc']) ports[name] = await freePort();
  const log = openSync(path.join(dir, 'weed.log'), 'a');
  const child = spawn(
    path.join(repoRoot, '.venv', 'bin', 'weed'),
    [
      'mini',
      `-dir=${path.join(dir, 'data')}`,
      '-ip=127.0.0.1',
      '-ip.bind=127.0.0.1',
      `-master.port=${ports.master}`,
      `-master.port.grpc=${ports.masterGrpc}`,
      `-volume.port=${ports.volume}`,
      `-volume.port.grpc=${ports.volumeGrpc}`,
      `-filer.port=${ports.filer}`,
      `-filer.port.grpc=${ports.filerGrpc}`,
      `-s3.port=${ports.s3}`,
      `-s3.port.grpc=${ports.s3Grpc}`,
      `-s3.port.iceberg=${ports.iceberg}`,
      '-s3.port.lance=0',
      `-admin.port=${ports.admin}`,
      `-admin.port.grpc=${ports.adminGrpc}`,
      '-admin.ui=false',
      '-tableBucket=warehouse',
      '-master.telemetry=false',
      '-webdav=false',
      `-s3.config=${path.join(dir, 's3.json')}`,
    ],
    { env: { ...process.env, AWS_ACCESS_KEY_ID: admin.accessKeyId, AWS_SECRET_ACCESS_KEY: admin.secretAccessKey }, stdio: ['ignore', log, log] },
  );
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const s3 = `http://127.0.0.1:${ports.s3}`;
    const iceberg = `http://127.0.0.1:${ports.iceberg}`;
    await until('s3', () => ok(`${s3}/healthz`), child);
    await until('the catalog', () => ok(`${iceberg}/v1/warehouse/namespaces`), child);
    const env: Record<string, string> = {
      ...stackEnv(),
      AWS_ENDPOINT_URL: s3,
      AWS_ACCESS_KEY_ID: admin.accessKeyId,
      AWS_SECRET_ACCESS_KEY: admin.secretAccessKey,
      ICEBERG_REST_URI: iceberg,
      ICEBERG_WAREHOUSE: 's3://warehouse',
      TABLEMERE_INTAKE_BUCKET: 'intake',
    };
    const client = createS3Client({ endpoint: s3, region: env.AWS_REGION!, credentials: admin });
    await until('the intake bucket', async () => {
      await client.send(new CreateBucketCommand({ Bucket: 'intake' })).catch((e: { name?: string }) => {
        if (e.name !== 'BucketAlreadyOwnedByYou' && e.name !== 'BucketAlreadyExists') throw e;
      });
      return true;
    }, child);
    client.destroy();
    return { env, reader, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
