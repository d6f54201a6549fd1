/**
 * `node --import tsx scripts/org-file-reference.ts`: prints the README's table of every organization-file field,
 * walked from the file's JSON Schema (so from the zod schema `org apply` validates with). test/org/org-file-schema.test.ts
 * checks that the README holds exactly this table, so a new field cannot go undocumented.
 */
import { fileURLToPath } from 'node:url';
import { orgFileJsonSchema } from '../src/org/org-file/schema.js';

interface Schema {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
}

interface Row {
  field: string;
  type: string;
  default: string;
  meaning: string;
}

/** One row per field, parents before children; a list of objects is `name[]`, a union's variants each add their fields. */
export function referenceRows(schema: Schema = orgFileJsonSchema() as Schema): Row[] {
  const rows: Row[] = [];
  const visit = (node: Schema, path: string, required: boolean, described?: string) => {
    const objects = objectVariants(node);
    rows.push({
      field: path,
      type: typeOf(node),
      default: node.default !== undefined ? JSON.stringify(node.default) : required ? 'required' : '',
      meaning: described ?? node.description ?? '',
    });
    const tags = objects.variants.length > 1 ? objects.variants.map(variantTag) : [];
    if (tags.length && tags.every(Boolean)) {
      rows.push({
        field: `${path}.${tags[0]!.name}`,
        type: tags.map((tag) => String(tag!.value)).join(', '),
        default: 'required',
        meaning: objects.variants.map((variant, index) => `${String(tags[index]!.value)}: ${variant.properties![tags[index]!.name].description ?? ''}`).join('; '),
      });
    }
    for (const variant of objects.variants) {
      const tag = objects.variants.length > 1 ? variantTag(variant) : undefined;
      for (const [name, child] of Object.entries(variant.properties ?? {})) {
        if (tag && name === tag.name) continue;
        const meaning = tag ? `with kind ${JSON.stringify(tag.value)}: ${child.description ?? ''}` : undefined;
        visit(child, `${path}${objects.list ? '[]' : ''}.${name}`, variant.required?.includes(name) ?? false, meaning);
      }
    }
  };
  for (const [name, child] of Object.entries(schema.properties ?? {})) visit(child, name, schema.required?.includes(name) ?? false);
  return rows;
}

export function referenceTable(rows = referenceRows()): string {
  const escape = (text: string) => text.replaceAll('|', '\\|');
  return [
    '| field | type | default | meaning |',
    '|---|---|---|---|',
    ...rows.map((row) => `| \`${row.field}\` | ${escape(row.type)} | ${row.default === 'required' ? 'required' : row.default ? `\`${escape(row.default)}\`` : ''} | ${escape(row.meaning)} |`),
  ].join('\n');
}

/** The object (or list of objects, or union of objects) a field holds, whose own fields get rows too. */
function objectVariants(node: Schema): { list: boolean; variants: Schema[] } {
  const list = node.type === 'array' && !!node.items;
  const inner = list ? node.items! : node;
  if (inner.anyOf) {
    // "one or a list of": the fields of the one describe the list's items too.
    const one = inner.anyOf.find((variant) => variant.type === 'object' && variant.properties);
    return { list, variants: one ? [one] : [] };
  }
  const variants = inner.oneOf ?? (inner.type === 'object' && inner.properties ? [inner] : []);
  return { list, variants: variants.filter((variant) => variant.type === 'object' && variant.properties) };
}

function variantTag(variant: Schema): { name: string; value: unknown } | undefined {
  const entry = Object.entries(variant.properties ?? {}).find(([, child]) => child.const !== undefined);
  return entry && { name: entry[0], value: entry[1].const };
}

function typeOf(node: Schema): string {
  if (node.oneOf) return node.oneOf.map((variant) => (variantTag(variant) ? `kind: ${String(variantTag(variant)!.value)}` : typeOf(variant))).join(' or ');
  if (node.anyOf) return node.anyOf.map(typeOf).join(' or ');
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((value) => String(value)).join(', ');
  if (node.type === 'array') return `list of ${node.items ? typeOf(node.items) : 'values'}`;
  if (node.type === 'integer' && node.minimum !== undefined && node.maximum !== undefined && node.maximum < 1e6) return `integer ${node.minimum}–${node.maximum}`;
  if (node.type === 'object') return node.properties ? 'object' : 'JSON object';
  return node.type ?? 'any JSON value';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(referenceTable());
