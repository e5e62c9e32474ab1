import { IcebergError } from '../../errors.ts';
import type { Namespace } from './types.ts';

/**
 * The spec's default namespace separator, URL-encoded as `/v1/config` announces one
 * (`namespace-separator`): the unit separator. Iceberg 1.11's reference server announces `%2E`
 * and refuses `%1F` in paths.
 */
export const DEFAULT_NAMESPACE_SEPARATOR = '%1F';

export function namespaceLevels(namespace: Namespace): string[] {
  const levels = typeof namespace === 'string' ? [namespace] : [...namespace];
  if (levels.length === 0 || levels.some((level) => level.length === 0)) {
    throw new TypeError('a namespace needs at least one non-empty level');
  }
  return levels;
}

/** Path builders for the REST catalog routes, below `{uri}/v1/{prefix}`. */
export class Endpoints {
  private readonly base: string;
  /** The separator as it goes into a path (encoded) and into a query value (decoded). */
  private readonly separator: { encoded: string; raw: string };

  /**
   * `prefix` goes into paths exactly as `/v1/config` gave it: it is already URL-safe, and
   * encoding it again breaks catalogs that encode their own (Nessie: `main%7Cwarehouse`).
   */
  constructor(prefix: string | undefined, namespaceSeparator: string = DEFAULT_NAMESPACE_SEPARATOR) {
    this.base = prefix ? `/v1/${prefix.replace(/^\/+|\/+$/g, '')}` : '/v1';
    let raw: string;
    try {
      raw = decodeURIComponent(namespaceSeparator);
    } catch {
      raw = '';
    }
    if (raw.length === 0) {
      throw new IcebergError('server_error', `catalog config announces an unusable namespace-separator ${JSON.stringify(namespaceSeparator)}`);
    }
    // Every byte percent-encoded: `encodeURIComponent('.')` would leave the dot bare.
    const encoded = Array.from(new TextEncoder().encode(raw), (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    this.separator = { encoded, raw };
  }

  static config(): string {
    return '/v1/config';
  }

  static oauthTokens(): string {
    return '/v1/oauth/tokens';
  }

  /** A namespace as one path segment: each level encoded, joined by the encoded separator. */
  encodeNamespace(namespace: Namespace): string {
    return this.levels(namespace).map(encodeURIComponent).join(this.separator.encoded);
  }

  /** A namespace as a query value (`parent=`): levels joined by the plain separator. */
  namespaceParam(namespace: Namespace): string {
    return this.levels(namespace).join(this.separator.raw);
  }

  namespaces(): string {
    return `${this.base}/namespaces`;
  }

  namespace(namespace: Namespace): string {
    return `${this.base}/namespaces/${this.encodeNamespace(namespace)}`;
  }

  tables(namespace: Namespace): string {
    return `${this.namespace(namespace)}/tables`;
  }

  table(namespace: Namespace, name: string): string {
    return `${this.tables(namespace)}/${encodeURIComponent(name)}`;
  }

  /** The catalog would split a level holding its separator into two levels. */
  private levels(namespace: Namespace): string[] {
    const levels = namespaceLevels(namespace);
    const clash = levels.find((level) => level.includes(this.separator.raw));
    if (clash !== undefined) {
      throw new IcebergError('bad_request', `namespace level ${JSON.stringify(clash)} contains the catalog's namespace separator ${JSON.stringify(this.separator.raw)}`);
    }
    return levels;
  }
}
