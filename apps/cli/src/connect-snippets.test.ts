import type { CatalogAuthType } from '@tablemere/contracts';
import { describe, expect, it } from 'vitest';
import { credentialNote, duckdbSnippet, engineCatalogName, pyicebergSnippet, sparkSnippet, type Target } from './connect-snippets.ts';

function target(auth: CatalogAuthType, overrides: Partial<Target> = {}): Target {
  return {
    name: 'garden',
    rest_uri: 'http://127.0.0.1:8181',
    warehouse: 's3://warehouse',
    prefix: 'warehouse',
    auth: { type: auth },
    s3: { endpoint: 'http://127.0.0.1:8333', region: 'us-east-1', path_style: true },
    ...overrides,
  };
}

describe('connect snippets', () => {
  it('PyIceberg: catalog settings literal, credentials from the environment', () => {
    const code = pyicebergSnippet(target('oauth2')).join('\n');
    expect(code).toContain('uri="http://127.0.0.1:8181"');
    expect(code).toContain('warehouse="s3://warehouse"');
    expect(code).toContain(`"credential": f"{os.environ['ICEBERG_CLIENT_ID']}:{os.environ['ICEBERG_CLIENT_SECRET']}"`);
    expect(code).toContain('"oauth2-server-uri": "http://127.0.0.1:8181/v1/oauth/tokens"');
    expect(code).toContain('"s3.endpoint": "http://127.0.0.1:8333"');
    expect(code).toContain('"s3.force-virtual-addressing": "false"');
    expect(code).toContain(`"s3.secret-access-key": os.environ['AWS_SECRET_ACCESS_KEY']`);
  });

  it('DuckDB: placeholders for secrets, the S3 endpoint as host:port, path style', () => {
    const sql = duckdbSnippet(target('oauth2')).join('\n');
    expect(sql).toContain("KEY_ID '<AWS_ACCESS_KEY_ID>'");
    expect(sql).toContain("CLIENT_SECRET '<ICEBERG_CLIENT_SECRET>'");
    expect(sql).toContain("ENDPOINT '127.0.0.1:8333'");
    expect(sql).toContain("URL_STYLE 'path'");
    expect(sql).toContain('USE_SSL false');
    expect(sql).toContain("ATTACH 's3://warehouse' AS garden (TYPE iceberg, ENDPOINT 'http://127.0.0.1:8181', SECRET garden_catalog);");
    expect(duckdbSnippet(target('none', { s3: { endpoint: 'https://s3.example:9000', region: 'eu-west-1', path_style: true } })).join('\n')).toContain(
      'USE_SSL true',
    );
  });

  it('Spark: one --conf per setting under spark.sql.catalog.<name>, credentials as $VARIABLES', () => {
    const lines = sparkSnippet(target('sigv4'));
    expect(lines).toContain('  --conf "spark.sql.catalog.garden=org.apache.iceberg.spark.SparkCatalog" \\');
    expect(lines).toContain('  --conf "spark.sql.catalog.garden.rest.sigv4-enabled=true" \\');
    expect(lines).toContain('  --conf "spark.sql.catalog.garden.s3.path-style-access=true" \\');
    expect(lines.at(-1)).toBe('  --conf "spark.sql.catalog.garden.s3.secret-access-key=$AWS_SECRET_ACCESS_KEY"');
  });

  it('follows the catalog auth type', () => {
    const bearer = [...pyicebergSnippet(target('bearer')), ...duckdbSnippet(target('bearer')), ...sparkSnippet(target('bearer'))].join('\n');
    expect(bearer).toContain(`"token": os.environ['ICEBERG_TOKEN']`);
    expect(bearer).toContain("TOKEN '<ICEBERG_TOKEN>'");
    expect(bearer).toContain('.token=$ICEBERG_TOKEN');
    const none = [...pyicebergSnippet(target('none')), ...duckdbSnippet(target('none')), ...sparkSnippet(target('none'))].join('\n');
    expect(none).not.toMatch(/credential|oauth2|token|sigv4/i);
    expect(none).toContain("AUTHORIZATION_TYPE 'none'");
    expect(credentialNote(target('none'))).not.toContain('ICEBERG_');
    expect(credentialNote(target('oauth2'))).toContain('ICEBERG_CLIENT_ID / ICEBERG_CLIENT_SECRET');
  });

  it('quotes values for their language and makes catalog names plain identifiers', () => {
    const odd = target('none', { name: '9-wh', warehouse: `it's "$x"` });
    expect(engineCatalogName('9-wh')).toBe('c_9_wh');
    expect(duckdbSnippet(odd).join('\n')).toContain(`ATTACH 'it''s "$x"' AS c_9_wh`);
    expect(pyicebergSnippet(odd).join('\n')).toContain(`warehouse="it's \\"$x\\"",`);
    expect(sparkSnippet(odd).join('\n')).toContain(`--conf "spark.sql.catalog.c_9_wh.warehouse=it's \\"\\$x\\"" \\`);
  });
});
