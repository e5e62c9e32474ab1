import type { Namespace } from './types.ts';

/** Multi-level namespaces travel as one path segment, levels joined by the unit separator. */
const NAMESPACE_SEPARATOR = '\x1f';

export function namespaceLevels(namespace: Namespace): string[] {
  const levels = typeof namespace === 'string' ? [namespace] : [...namespace];
  if (levels.length === 0 || levels.some((level) => level.length === 0)) {
    throw new TypeError('a namespace needs at least one non-empty level');
  }
  return levels;
}

export function encodeNamespace(namespace: Namespace): string {
  return encodeURIComponent(namespaceLevels(namespace).join(NAMESPACE_SEPARATOR));
}

/** Path builders for the REST catalog routes, below `{uri}/v1/{prefix}`. */
export class Endpoints {
  private readonly base: string;

  constructor(prefix: string | undefined) {
    this.base = prefix ? `/v1/${encodeURIComponent(prefix)}` : '/v1';
  }

  static config(): string {
    return '/v1/config';
  }

  static oauthTokens(): string {
    return '/v1/oauth/tokens';
  }

  namespaces(): string {
    return `${this.base}/namespaces`;
  }

  namespace(namespace: Namespace): string {
    return `${this.base}/namespaces/${encodeNamespace(namespace)}`;
  }

  tables(namespace: Namespace): string {
    return `${this.namespace(namespace)}/tables`;
  }

  table(namespace: Namespace, name: string): string {
    return `${this.tables(namespace)}/${encodeURIComponent(name)}`;
  }
}
