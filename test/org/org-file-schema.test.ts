/**
 * The organization file's reference: `npx atrium org schema` prints a JSON Schema that an editor's validator
 * (here Ajv, draft 2020-12) accepts the README's example with and rejects the mistakes `org apply` rejects,
 * and the README's field table is exactly the one generated from it.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { extractExamples } from '../../scripts/readme-examples.js';
import { referenceTable } from '../../scripts/org-file-reference.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';

const run = promisify(execFile);
const cli = path.resolve('bin/atrium.js');

describe('the organization file reference', () => {
  let schema: Record<string, unknown>;
  let readme: string;
  let readmeOrgFile: string;

  it('is printed by `atrium org schema` as JSON Schema', { timeout: 60_000 }, async () => {
    const { stdout } = await run('node', [cli, 'org', 'schema'], { env: { PATH: process.env.PATH } });
    schema = JSON.parse(stdout) as Record<string, unknown>;
    expect(schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Atrium organization file', type: 'object' });
    readme = await readFile('README.md', 'utf8');
    readmeOrgFile = extractExamples(readme).find((example) => example.directive?.kind === 'file' && example.directive.argument === 'org.yaml')!.code;
  });

  it('validates as org apply does: the README example passes, mistakes fail with where they are', () => {
    const validate = new Ajv2020({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
    expect(readmeOrgFile.split('\n')[0]).toBe('# yaml-language-server: $schema=./org-file.schema.json');
    expect(validate(parseYaml(readmeOrgFile)), JSON.stringify(validate.errors)).toBe(true);
    expect(() => parseOrgFile(readmeOrgFile)).not.toThrow();

    const mistakes: Array<[string, string]> = [
      ['agents: [{ key: scribe, name: S, autonomy: 7 }]', '/agents/0/autonomy'],
      ['people: [{ email: a@example.com, name: A, pasword_env: X }]', '/people/0'],
      ['capabilities: [{ key: x, risk: low, connector: { kind: webhook } }]', '/capabilities/0/connector'],
      ['decision_ttl: 7 days', '/decision_ttl'],
      ['rules: [{ name: R, when: { risk: urgent }, then: deny }]', '/rules/0/when/risk'],
    ];
    for (const [text, where] of mistakes) {
      expect(validate(parseYaml(text)), text).toBe(false);
      expect(validate.errors!.map((error) => error.instancePath), text).toContain(where);
      expect(() => parseOrgFile(text), text).toThrow();
    }
  });

  it('has a README table of every field with its default, generated from the schema', () => {
    const table = referenceTable();
    expect(readme).toContain(table);
    for (const field of ['organization.client_autonomy', 'agents[].delivery.secret_env', 'rules[].when.input.op', 'decision_ttl']) {
      expect(table).toContain(`| \`${field}\` |`);
    }
    expect(table).toContain('| `decision_ttl` | string | `"7d"` |');
    expect(table).toContain('| `agents[].autonomy` | integer 0–3 | `1` |');
  });
});
