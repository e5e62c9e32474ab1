import type { Connection } from '@tablemere/contracts';

/** The warehouse part of `GET /v1/connection`: everything an engine needs but credentials. */
export type Target = Connection['warehouse'];

/**
 * Where the snippets expect credentials. tablemere never prints a secret: PyIceberg and Spark
 * read these environment variables, DuckDB SQL gets `<NAME>` placeholders to paste over.
 */
export const credentialVars = {
  s3AccessKeyId: 'AWS_ACCESS_KEY_ID',
  s3SecretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  clientId: 'ICEBERG_CLIENT_ID',
  clientSecret: 'ICEBERG_CLIENT_SECRET',
  token: 'ICEBERG_TOKEN',
} as const;

// The connection answer names the auth type only; SigV4 catalogs are signed as S3 Tables
// (SeaweedFS accepts that name as well) in the S3 region.
const sigv4Service = 's3tables';

/** One line saying which variables the snippets below read, for the auth type at hand. */
export function credentialNote(target: Target): string {
  const v = credentialVars;
  const catalog =
    target.auth.type === 'oauth2' ? `; ${v.clientId} / ${v.clientSecret} to its catalog OAuth2 client`
    : target.auth.type === 'bearer' ? `; ${v.token} to its catalog token`
    : '';
  return `Credentials are never printed: set ${v.s3AccessKeyId} / ${v.s3SecretAccessKey} to the warehouse's S3 credentials${catalog} (DuckDB: paste them over the <...> placeholders).`;
}

/** A name engines accept unquoted for the attached catalog (`my-wh` -> `my_wh`). */
export function engineCatalogName(name: string): string {
  const plain = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(plain) ? `c_${plain}` : plain;
}

export function pyicebergSnippet(target: Target): string[] {
  const v = credentialVars;
  // Single-quoted keys, so the same expression also works inside an f"..." string.
  const env = (name: string) => `os.environ['${name}']`;
  const props: [string, string][] = [];
  switch (target.auth.type) {
    case 'oauth2':
      props.push(['credential', `f"{${env(v.clientId)}}:{${env(v.clientSecret)}}"`]);
      props.push(['oauth2-server-uri', py(tokenUrl(target))]);
      break;
    case 'sigv4':
      props.push(['rest.sigv4-enabled', py('true')], ['rest.signing-region', py(target.s3.region)], ['rest.signing-name', py(sigv4Service)]);
      break;
    case 'bearer':
      props.push(['token', env(v.token)]);
      break;
    case 'none':
      break;
  }
  props.push(
    ['s3.endpoint', py(target.s3.endpoint)],
    ['s3.region', py(target.s3.region)],
    // Path-style addressing: the bucket goes in the path, not the host name.
    ['s3.force-virtual-addressing', py(String(!target.s3.path_style))],
    ['s3.access-key-id', env(v.s3AccessKeyId)],
    ['s3.secret-access-key', env(v.s3SecretAccessKey)],
  );
  return [
    'import os',
    'from pyiceberg.catalog import load_catalog',
    '',
    'catalog = load_catalog(',
    `    ${py(target.name)},`,
    '    type="rest",',
    `    uri=${py(target.rest_uri)},`,
    `    warehouse=${py(target.warehouse)},`,
    '    **{',
    ...props.map(([name, value]) => `        ${py(name)}: ${value},`),
    '    },',
    ')',
    'print(catalog.list_namespaces())',
  ];
}

export function duckdbSnippet(target: Target): string[] {
  const v = credentialVars;
  const name = engineCatalogName(target.name);
  const endpoint = new URL(target.s3.endpoint);
  const lines = [
    'INSTALL iceberg; LOAD iceberg;',
    'INSTALL httpfs; LOAD httpfs;',
    `CREATE SECRET ${name}_s3 (`,
    '    TYPE s3,',
    `    KEY_ID ${sql(`<${v.s3AccessKeyId}>`)},`,
    `    SECRET ${sql(`<${v.s3SecretAccessKey}>`)},`,
    `    ENDPOINT ${sql(endpoint.host)},`,
    `    URL_STYLE ${sql(target.s3.path_style ? 'path' : 'vhost')},`,
    `    USE_SSL ${endpoint.protocol === 'https:'},`,
    `    REGION ${sql(target.s3.region)}`,
    ');',
  ];
  const attach = [`TYPE iceberg`, `ENDPOINT ${sql(target.rest_uri)}`];
  switch (target.auth.type) {
    case 'oauth2':
      lines.push(
        `CREATE SECRET ${name}_catalog (`,
        '    TYPE iceberg,',
        `    CLIENT_ID ${sql(`<${v.clientId}>`)},`,
        `    CLIENT_SECRET ${sql(`<${v.clientSecret}>`)},`,
        `    OAUTH2_SERVER_URI ${sql(tokenUrl(target))}`,
        ');',
      );
      attach.push(`SECRET ${name}_catalog`);
      break;
    case 'bearer':
      lines.push(`CREATE SECRET ${name}_catalog (TYPE iceberg, TOKEN ${sql(`<${v.token}>`)});`);
      attach.push(`SECRET ${name}_catalog`);
      break;
    case 'sigv4':
      attach.push(`AUTHORIZATION_TYPE 'sigv4'`);
      break;
    case 'none':
      attach.push(`AUTHORIZATION_TYPE 'none'`);
      break;
  }
  lines.push(`ATTACH ${sql(target.warehouse)} AS ${name} (${attach.join(', ')});`, 'SHOW ALL TABLES;');
  return lines;
}

export function sparkSnippet(target: Target): string[] {
  const v = credentialVars;
  const prefix = `spark.sql.catalog.${engineCatalogName(target.name)}`;
  const confs: string[] = [
    `spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions`,
    `${prefix}=org.apache.iceberg.spark.SparkCatalog`,
    `${prefix}.type=rest`,
    `${prefix}.uri=${dq(target.rest_uri)}`,
    `${prefix}.warehouse=${dq(target.warehouse)}`,
  ];
  switch (target.auth.type) {
    case 'oauth2':
      confs.push(`${prefix}.credential=$${v.clientId}:$${v.clientSecret}`, `${prefix}.oauth2-server-uri=${dq(tokenUrl(target))}`);
      break;
    case 'sigv4':
      confs.push(`${prefix}.rest.sigv4-enabled=true`, `${prefix}.rest.signing-region=${dq(target.s3.region)}`, `${prefix}.rest.signing-name=${sigv4Service}`);
      break;
    case 'bearer':
      confs.push(`${prefix}.token=$${v.token}`);
      break;
    case 'none':
      break;
  }
  confs.push(
    `${prefix}.io-impl=org.apache.iceberg.aws.s3.S3FileIO`,
    `${prefix}.s3.endpoint=${dq(target.s3.endpoint)}`,
    `${prefix}.s3.path-style-access=${target.s3.path_style}`,
    `${prefix}.client.region=${dq(target.s3.region)}`,
    `${prefix}.s3.access-key-id=$${v.s3AccessKeyId}`,
    `${prefix}.s3.secret-access-key=$${v.s3SecretAccessKey}`,
  );
  return [
    '# with iceberg-spark-runtime and iceberg-aws-bundle on the classpath (--packages)',
    'spark-sql \\',
    // Double quotes let the shell fill in the $VARIABLES; literal values are escaped by `dq`.
    ...confs.map((conf, i) => `  --conf "${conf}"${i < confs.length - 1 ? ' \\' : ''}`),
  ];
}

function tokenUrl(target: Target): string {
  return `${target.rest_uri.replace(/\/+$/, '')}/v1/oauth/tokens`;
}

/** A Python string literal (JSON's escapes are Python's). */
function py(text: string): string {
  return JSON.stringify(text);
}

/** Text to place inside a double-quoted shell word, taken literally. */
function dq(text: string): string {
  return text.replace(/["\\$`]/g, (c) => `\\${c}`);
}

/** A SQL string literal. */
function sql(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
