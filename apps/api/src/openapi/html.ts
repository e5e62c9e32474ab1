import type { OpenApiDocument, Operation } from './document.ts';

type Json = Record<string, unknown>;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Plain text with `code` spans, in paragraphs split on blank lines. */
function prose(text: string | undefined): string {
  if (!text) return '';
  return text
    .split(/\n\n+/)
    .map((paragraph) => `<p>${escape(paragraph).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
    .join('');
}

const pretty = (value: unknown) => `<pre>${escape(JSON.stringify(value, null, 2))}</pre>`;

/** A schema as a link to its component, or printed in place. */
function schemaOf(schema: Json | undefined): string {
  if (!schema) return '';
  const ref = typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined;
  return ref ? `<a href="#schema-${escape(ref)}">${escape(ref)}</a>` : `<details><summary>schema</summary>${pretty(schema)}</details>`;
}

/** The examples of a body, open where they show what succeeds (`open`), folded for errors. */
function examplesOf(content: Json | undefined, open = false): string {
  const media = Object.values(content ?? {})[0] as { examples?: Record<string, { summary: string; value: unknown }> } | undefined;
  return Object.entries(media?.examples ?? {})
    .map(([name, example]) => `<details${open ? ' open' : ''}><summary>example: ${escape(example.summary ?? name)}</summary>${pretty(example.value)}</details>`)
    .join('');
}

function parametersOf(op: Operation): string {
  if (!op.parameters?.length) return '';
  const rows = op.parameters.map((p) => {
    const schema = p.schema as Json;
    const shape = [schema.type, schema.pattern ? `pattern ${schema.pattern}` : undefined, schema.enum ? `one of ${(schema.enum as unknown[]).join(', ')}` : undefined].filter(Boolean).join('; ');
    return `<tr><td><code>${escape(String(p.name))}</code></td><td>${escape(String(p.in))}</td><td>${p.required ? 'required' : ''}</td><td>${escape(shape)}</td><td>${prose(p.description as string | undefined)}</td></tr>`;
  });
  return `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th></th><th>value</th><th></th></tr>${rows.join('')}</table>`;
}

function responsesOf(op: Operation): string {
  const rows = Object.entries(op.responses).map(([status, response]) => {
    const headers = Object.entries((response.headers as Json | undefined) ?? {})
      .filter(([name]) => name !== 'X-Request-Id')
      .map(([name, header]) => `<div>header <code>${escape(name)}</code>${prose((header as Json).description as string | undefined)}</div>`)
      .join('');
    const media = Object.values((response.content as Json | undefined) ?? {})[0] as Json | undefined;
    return `<tr><td class="status s${status[0]}">${escape(status)}</td><td>${prose(response.description)}${headers}${schemaOf(media?.schema as Json | undefined)}${examplesOf(response.content as Json | undefined, Number(status) < 400)}</td></tr>`;
  });
  return `<h4>Answers</h4><table>${rows.join('')}</table>`;
}

function operationOf(path: string, method: string, op: Operation, doc: OpenApiDocument): string {
  const scheme = Object.keys(op.security[0] ?? {})[0];
  const schemes = doc.components.securitySchemes as Record<string, Json>;
  const auth = scheme ? `<p class="auth">Authorization: <code>Bearer</code> ${escape(String(schemes[scheme]?.bearerFormat ?? scheme))} (<a href="#auth-${scheme}">${scheme}</a>)</p>` : '<p class="auth">No authorization.</p>';
  const body = op.requestBody as Json | undefined;
  const bodyContent = body?.content as Json | undefined;
  const bodyHtml = body
    ? `<h4>Body <code>application/json</code></h4>${prose(body.description as string | undefined)}${schemaOf((Object.values(bodyContent ?? {})[0] as Json | undefined)?.schema as Json | undefined)}${examplesOf(bodyContent, true)}`
    : '';
  return `<section id="${escape(op.operationId)}"><h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
<p class="summary">${escape(op.summary)}</p>${auth}${prose(op.description)}${parametersOf(op)}${bodyHtml}${responsesOf(op)}</section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d232a;display:flex}
nav{width:320px;overflow-wrap:anywhere;flex:none;height:100vh;overflow:auto;position:sticky;top:0;background:#f4f6f8;padding:16px;box-sizing:border-box;font-size:14px}
nav a{display:block;color:#1d232a;text-decoration:none;padding:2px 0}nav h2{font-size:13px;text-transform:uppercase;color:#667;margin:16px 0 4px}
main{max-width:1000px;padding:24px 40px;min-width:0}section{border-top:1px solid #dde;padding:12px 0}
code{background:#eef1f4;padding:0 3px;border-radius:3px;font-size:13px}pre{background:#f4f6f8;padding:8px;overflow:auto;font-size:12px}
table{border-collapse:collapse;width:100%;margin:4px 0}td,th{border:1px solid #dde;padding:4px 8px;vertical-align:top;text-align:left}td p{margin:2px 0}
.method{display:inline-block;min-width:56px;text-align:center;border-radius:4px;color:#fff;font-size:13px;padding:1px 6px}
.get{background:#2f6fbd}.post{background:#2c8a4a}.put{background:#b7791f}.delete{background:#b83232}
.status{font-weight:bold;width:48px}.s2{color:#2c8a4a}.s4{color:#b7791f}.s5{color:#b83232}.summary{font-weight:600}.auth{color:#445}`;

/** The reference page of a document: one self-contained HTML page, no script, no outside asset. */
export function renderReference(doc: OpenApiDocument, documentUrl: string): string {
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
  const tags = doc.tags.map((tag) => tag.name).filter((tag) => operations.some((o) => o.op.tags[0] === tag));
  const nav = tags
    .map((tag) => `<h2>${escape(tag)}</h2>${operations.filter((o) => o.op.tags[0] === tag).map((o) => `<a href="#${escape(o.op.operationId)}">${o.method.toUpperCase()} ${escape(o.path)}</a>`).join('')}`)
    .join('');
  const schemes = Object.entries(doc.components.securitySchemes as Record<string, Json>)
    .map(([name, s]) => `<tr id="auth-${escape(name)}"><td><code>${escape(name)}</code></td><td><code>Authorization: Bearer ${escape(String(s.bearerFormat ?? '<secret>'))}</code>${prose(s.description as string)}</td></tr>`)
    .join('');
  const errors = doc['x-error-codes']
    .map((e) => `<tr><td><code>${e.code}</code></td><td class="status s${String(e.status)[0]}">${e.status}</td><td>${escape(e.message)}${e.retry_after ? ' <code>Retry-After</code>' : ''}</td></tr>`)
    .join('');
  const schemas = Object.entries(doc.components.schemas as Record<string, Json>)
    .map(([name, schema]) => `<details id="schema-${escape(name)}"><summary><code>${escape(name)}</code></summary>${pretty(schema)}</details>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(doc.info.title)}</title><style>${STYLE}</style></head><body>
<nav><strong>${escape(doc.info.title)}</strong><a href="${escape(documentUrl)}">OpenAPI ${escape(doc.openapi)} document</a><a href="#authorization">Authorization</a><a href="#errors">Error codes</a>${nav}<h2>schemas</h2><a href="#schemas">All schemas</a></nav>
<main><h1>${escape(doc.info.title)} <small>${escape(doc.info.version)}</small></h1>${prose(doc.info.description)}
<h2 id="authorization">Authorization</h2><table>${schemes}</table>
<h2 id="errors">Error codes</h2><p>Every error is <code>{"error": {"code", "message", ...details, "request_id"}}</code>; branch on <code>code</code>.</p><table>${errors}</table>
${tags.map((tag) => `<h2>${escape(tag)}</h2>${operations.filter((o) => o.op.tags[0] === tag).map((o) => operationOf(o.path, o.method, o.op, doc)).join('')}`).join('')}
<h2 id="schemas">Schemas</h2>${schemas}</main></body></html>`;
}
