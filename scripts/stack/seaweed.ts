import { mkdirSync } from 'node:fs';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startProcess, type Managed } from './process.ts';
import { httpStatusIs, waitUntilReady } from './ready.ts';
import type { StackPorts } from './ports.ts';

export interface SeaweedOptions {
  weedBin: string;
  dir: string;
  logFile: string;
  ports: StackPorts;
  tableBucket: string;
  intakeBucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/**
 * SeaweedFS `weed mini`: S3 and the Iceberg REST catalog in one process. The data dir is new, or
 * one it ran on with the same flags (it saves them in `<dir>/mini.options` and reloads them: a
 * restart), and the credentials in its environment become the admin identity.
 */
export async function startSeaweed(o: SeaweedOptions): Promise<Managed> {
  mkdirSync(o.dir, { recursive: true });
  const p = o.ports;
  const args = [
    'mini',
    `-dir=${o.dir}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${p.master}`,
    `-master.port.grpc=${p.masterGrpc}`,
    `-volume.port=${p.volume}`,
    `-volume.port.grpc=${p.volumeGrpc}`,
    `-filer.port=${p.filer}`,
    `-filer.port.grpc=${p.filerGrpc}`,
    `-s3.port=${p.s3}`,
    `-s3.port.grpc=${p.s3Grpc}`,
    `-s3.port.iceberg=${p.iceberg}`,
    '-s3.port.lance=0',
    `-admin.port=${p.admin}`,
    `-admin.port.grpc=${p.adminGrpc}`,
    '-admin.ui=false',
    `-tableBucket=${o.tableBucket}`,
    '-master.telemetry=false',
    '-webdav=false',
  ];
  const proc = startProcess({
    name: 'seaweedfs',
    cmd: o.weedBin,
    args,
    logFile: o.logFile,
    env: { ...process.env, AWS_ACCESS_KEY_ID: o.accessKeyId, AWS_SECRET_ACCESS_KEY: o.secretAccessKey },
  });
  const s3 = `http://127.0.0.1:${p.s3}`;
  await waitUntilReady('seaweedfs s3', () => httpStatusIs(`${s3}/healthz`), { deadlineMs: 60_000, proc });
  // The catalog answers /v1/config early; namespaces only once the table bucket exists.
  await waitUntilReady('seaweedfs iceberg catalog', () => httpStatusIs(`http://127.0.0.1:${p.iceberg}/v1/${o.tableBucket}/namespaces`), {
    deadlineMs: 60_000,
    proc,
  });
  const client = new S3Client({
    endpoint: s3,
    region: o.region,
    forcePathStyle: true,
    credentials: { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey },
  });
  await waitUntilReady(
    'seaweedfs intake bucket',
    async () => {
      // A restart on the same data dir finds the bucket there already.
      await client.send(new CreateBucketCommand({ Bucket: o.intakeBucket })).catch((error: { name?: string }) => {
        if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
      });
      return true;
    },
    { deadlineMs: 30_000, proc },
  );
  client.destroy();
  return proc;
}
