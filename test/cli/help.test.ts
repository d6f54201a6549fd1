import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

describe('atrium explains itself', () => {
  it('prints its version with --version', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    expect(await runCli(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('lists every command with `atrium help`, and points to the README', async () => {
    const { code, stdout } = await runCli(['help']);
    expect(code).toBe(0);
    for (const command of ['serve', 'migrate', 'org apply FILE', 'people set-password EMAIL', 'demo', 'help']) expect(stdout).toContain(`atrium ${command}`);
    expect(stdout).toContain('README.md');
  });

  it('lists a command’s options and the environment variables it reads with --help', async () => {
    const { code, stdout } = await runCli(['serve', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('--only org|content');
    for (const variable of ['ORG_PORT', 'CONTENT_PORT', 'ATRIUM_DATA_DIR', 'DATABASE_URL', 'LOG_FORMAT', 'METRICS_ENABLED']) expect(stdout).toContain(variable);
    expect((await runCli(['help', 'org'])).stdout).toContain('password_env');
  });
});
