/**
 * A password read from standard input, never from the command line (where `ps` and the shell's history would
 * keep it): its first line, at most 1,024 bytes. At a terminal the prompt goes to standard error, so standard
 * output stays the command's answer.
 */
import { UsageError } from './errors.js';

const MAX_BYTES = 1024;

export async function readPasswordFromStdin(prompt: string, input: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (input.isTTY) process.stderr.write(prompt);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (chunks.some((part) => part.includes(0x0a)) || size > MAX_BYTES) break;
  }
  input.pause();
  const text = Buffer.concat(chunks).toString('utf8');
  const newline = text.indexOf('\n');
  if (newline === -1 && size > MAX_BYTES) throw new UsageError(`the password on standard input is longer than ${MAX_BYTES} bytes`);
  const line = (newline === -1 ? text : text.slice(0, newline)).replace(/\r$/, '');
  if (!line) throw new UsageError('no password on standard input: pipe it in, e.g. `printf %s "$NEW_PASSWORD" | npx atrium people set-password EMAIL`');
  return line;
}
