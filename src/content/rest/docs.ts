/**
 * `/docs`: the OpenAPI document rendered server-side as one readable HTML page — operations grouped by
 * tag, each with its auth requirement, parameters, body fields and responses. Plain HTML and inline CSS
 * only, so it works offline and under a `default-src 'none'` content security policy.
 */
import { STATUS_CODES } from 'node:http';

/** The parts of an OpenAPI 3.1 document this page reads. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema>; securitySchemes?: Record<string, unknown> };
}

export interface OpenApiOperation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }>;
  requestBody?: { content: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: JsonSchema }> }>;
}

export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export function renderApiReference(document: OpenApiDocument): string {
  const byTag = new Map<string, Array<{ method: string; path: string; operation: OpenApiOperation }>>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push({ method, path, operation });
    }
  }
  const sections = [...byTag].map(
    ([tag, operations]) => `<section id="${escape(tag)}"><h2>${escape(tag)}</h2>
${operations.map(({ method, path, operation }) => renderOperation(method, path, operation)).join('\n')}</section>`,
  );
  const toc = [...byTag.keys()].map((tag) => `<a href="#${escape(tag)}">${escape(tag)}</a>`).join(' · ');
  const server = document.servers?.[0]?.url;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(document.info.title)} — API reference</title>
<style>${STYLE}</style></head>
<body><header><h1>${escape(document.info.title)} <small>${escape(document.info.version)}</small></h1>
${document.info.description ? `<p>${inlineCode(document.info.description)}</p>` : ''}
${server ? `<p>Base URL <code>${escape(server)}</code> · machine-readable: <a href="openapi.json">openapi.json</a></p>` : ''}
<nav>${toc}</nav></header>
<main>${sections.join('\n')}</main></body></html>
`;
}

function renderOperation(method: string, path: string, operation: OpenApiOperation): string {
  const secured = (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
  const parameters = (operation.parameters ?? []).map((parameter) =>
    row(`${parameter.name} <small>${parameter.in}</small>`, parameter.schema ?? {}, parameter.required ?? false, parameter.description),
  );
  const body = Object.entries(operation.requestBody?.content ?? {}).map(([mediaType, { schema }]) => {
    const properties = Object.entries(schema?.properties ?? {}).map(([name, field]) =>
      row(name, field, schema?.required?.includes(name) ?? false, field.description),
    );
    return `<h4>Body <code>${escape(mediaType)}</code></h4>${table(properties)}`;
  });
  const responses = Object.entries(operation.responses ?? {}).map(
    ([status, response]) =>
      `<li><code>${escape(status)}</code> ${escape(readableDescription(status, response.description))}${describeBody(response.content)}</li>`,
  );
  return `<article id="${escape(`${method}-${path}`)}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code>${secured ? ' <span class="auth">bearer secret</span>' : ''}</h3>
${operation.summary ? `<p>${inlineCode(operation.summary)}</p>` : ''}${operation.description ? `<p>${inlineCode(operation.description)}</p>` : ''}
${parameters.length ? `<h4>Parameters</h4>${table(parameters)}` : ''}${body.join('')}
${responses.length ? `<h4>Responses</h4><ul>${responses.join('')}</ul>` : ''}
</article>`;
}

/** Swagger's placeholder says nothing; the status text does. */
function readableDescription(status: string, description = ''): string {
  return description === 'Default Response' ? (STATUS_CODES[status] ?? description) : description;
}

function describeBody(content: Record<string, { schema?: JsonSchema }> | undefined): string {
  const schema = content?.['application/json']?.schema;
  if (!schema?.properties) return '';
  return ` — <code>{ ${Object.keys(schema.properties).map(escape).join(', ')} }</code>`;
}

function row(name: string, schema: JsonSchema, required: boolean, description?: string): string {
  return `<tr><td><code>${name}</code>${required ? ' <em>required</em>' : ''}</td><td>${escape(typeOf(schema))}</td><td>${escape(
    [description ?? schema.description, constraintsOf(schema)].filter(Boolean).join(' — '),
  )}</td></tr>`;
}

function table(rows: string[]): string {
  return rows.length ? `<table><thead><tr><th>name</th><th>type</th><th>notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>` : '';
}

/** A short human reading of a JSON schema type: `string`, `one of: a, b`, `array of string`, … */
export function typeOf(schema: JsonSchema): string {
  if (schema.$ref) return schema.$ref.split('/').pop() ?? 'object';
  if (schema.enum) return `one of: ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeOf).join(' or ');
  const type = [schema.type ?? 'any'].flat().join(' or ');
  if (type === 'array' && schema.items) return `array of ${typeOf(schema.items)}`;
  return schema.format ? `${type} (${schema.format})` : type;
}

function constraintsOf(schema: JsonSchema): string {
  const parts: string[] = [];
  const range = (min?: number, max?: number, unit = '') =>
    min !== undefined && max !== undefined ? `${min} to ${max}${unit}` : min !== undefined ? `at least ${min}${unit}` : max !== undefined ? `at most ${max}${unit}` : '';
  parts.push(range(schema.minimum, schema.maximum), range(schema.minLength, schema.maxLength, ' characters'), range(schema.minItems, schema.maxItems, ' items'));
  if (schema.pattern) parts.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.filter(Boolean).join('; ');
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Escapes, then shows `backticked` words as code. */
function inlineCode(text: string): string {
  return escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2430;background:#fafbfc}
header,main{max-width:980px;margin:0 auto;padding:0 20px}
header{padding-top:24px}h1 small{font-weight:400;color:#6a7280;font-size:.6em}
nav a{margin-right:4px}h2{border-bottom:2px solid #d8dde5;padding-bottom:4px;margin-top:40px;text-transform:capitalize}
article{background:#fff;border:1px solid #e2e6ec;border-radius:6px;padding:4px 16px 12px;margin:14px 0}
h3{font-size:1.05em}h4{margin:12px 0 4px;font-size:.9em;color:#4a5260}
.method{display:inline-block;min-width:58px;text-align:center;border-radius:4px;color:#fff;font-size:.8em;padding:2px 6px}
.get{background:#2f7d4f}.post{background:#2a62b8}.patch{background:#a86a12}.put{background:#6d4bb5}.delete{background:#b83a3a}
.auth{font-size:.75em;background:#fff3d6;border:1px solid #e7c66b;border-radius:4px;padding:1px 6px;font-weight:400}
table{border-collapse:collapse;width:100%;font-size:.9em}td,th{border-top:1px solid #eceff3;padding:4px 6px;text-align:left;vertical-align:top}
th{color:#6a7280;font-weight:500}code{font-family:ui-monospace,monospace;font-size:.92em}em{color:#b83a3a;font-style:normal;font-size:.8em}
`;
