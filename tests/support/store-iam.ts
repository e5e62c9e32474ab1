import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * The store's identities as its IAM API lists them (SeaweedFS serves IAM on the S3 port): one
 * `user/access key` entry per access key of every user. A platform action that wrote an
 * identity (a user, a key, a policy attachment's user) changes this list.
 */
export async function storeIdentities(env: Record<string, string>): Promise<string[]> {
  const users = await iam(env, { Action: 'ListUsers' }, 'UserName');
  const identities: string[] = [];
  for (const user of users.sort()) {
    const keys = await iam(env, { Action: 'ListAccessKeys', UserName: user }, 'AccessKeyId');
    identities.push(...(keys.length === 0 ? [`${user}/`] : keys.sort().map((key) => `${user}/${key}`)));
  }
  return identities;
}

/** One signed IAM query; the text of every `<field>` element in the answer. */
async function iam(env: Record<string, string>, params: Record<string, string>, field: string): Promise<string[]> {
  const url = new URL(env.AWS_ENDPOINT_URL!);
  const body = new URLSearchParams({ ...params, Version: '2010-05-08' }).toString();
  const signer = new SignatureV4({
    service: 'iam',
    region: env.AWS_REGION!,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: '/',
    headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  const res = await fetch(`${url.origin}/`, { method: 'POST', headers: signed.headers, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`store IAM ${params.Action}: ${res.status} ${text.slice(0, 300)}`);
  return [...text.matchAll(new RegExp(`<${field}>([^<]*)</${field}>`, 'g'))].map((m) => m[1]!);
}
