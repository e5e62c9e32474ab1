import type { ListPage, ObjectSummary } from './object-store.ts';

/**
 * A ListObjectsV2 answer's XML as a page. The answer is flat and its elements fixed (S3's
 * ListBucketResult), so a scan of the few elements a listing needs does, at a fraction of the
 * SDK's cost per key (its XML parser builds every element as an object first).
 */
export function parseListAnswer(xml: string): ListPage {
  const objects: ObjectSummary[] = [];
  for (const [, contents] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    const etag = element(contents!, 'ETag');
    const modified = element(contents!, 'LastModified');
    objects.push({
      key: element(contents!, 'Key') ?? '',
      size: Number(element(contents!, 'Size') ?? 0),
      etag: etag?.replace(/^"|"$/g, ''),
      lastModified: modified === undefined ? undefined : new Date(modified),
    });
  }
  const prefixes: string[] = [];
  for (const [, common] of xml.matchAll(/<CommonPrefixes>([\s\S]*?)<\/CommonPrefixes>/g)) {
    const prefix = element(common!, 'Prefix');
    if (prefix !== undefined) prefixes.push(prefix);
  }
  // Text never holds a raw `<`, so a key cannot pass for an element.
  const truncated = element(xml, 'IsTruncated') === 'true';
  return { objects, prefixes, nextToken: truncated ? element(xml, 'NextContinuationToken') : undefined };
}

/** The text of the first `<name>` element in `xml`, entities decoded; undefined if there is none. */
function element(xml: string, name: string): string | undefined {
  const start = xml.indexOf(`<${name}>`);
  if (start === -1) return xml.includes(`<${name}/>`) ? '' : undefined;
  const from = start + name.length + 2;
  const end = xml.indexOf(`</${name}>`, from);
  return end === -1 ? undefined : decode(xml.slice(from, end));
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XML's five named entities and numeric character references. */
function decode(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref] ?? whole;
    return String.fromCodePoint(ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1)));
  });
}
