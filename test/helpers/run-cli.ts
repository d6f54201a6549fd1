/** Runs `bin/atrium.js` as a child process, as a person would, and collects its output and exit code. */
import { execFile } from 'node:child_process';
import path from 'node:path';

const cli = path.resolve('bin/atrium.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, timeout: timeoutMs }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
