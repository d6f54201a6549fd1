/**
 * A password read from standard input, never from the command line (where `ps` and the shell's history would
 * keep it): its first line, at most 1,024 bytes. At a terminal the prompt goes to standard error, so standard
 * output stays the command's answer, and what is typed is not echoed.
 */
import { UsageError } from './errors.js';

const MAX_BYTES = 1024;

export async function readPasswordFromStdin(prompt: string, input: NodeJS.ReadStream = process.stdin): Promise<string> {
  const line = input.isTTY ? await readHidden(prompt, input) : await readFirstLine(input);
  if (Buffer.byteLength(line) > MAX_BYTES) throw new UsageError(`the password on standard input is longer than ${MAX_BYTES} bytes`);
  if (!line) throw new UsageError('no password on standard input: pipe it in, e.g. `printf %s "$NEW_PASSWORD" | npx atrium people set-password EMAIL`');
  return line;
}

async function readFirstLine(input: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (chunk.includes(0x0a) || size > MAX_BYTES) break;
  }
  input.pause();
  const text = Buffer.concat(chunks).toString('utf8');
  const newline = text.indexOf('\n');
  return (newline === -1 ? text : text.slice(0, newline)).replace(/\r$/, '');
}

/** Raw mode: Enter ends, Backspace erases, Ctrl-C or Ctrl-D gives up; nothing typed reaches the screen. */
function readHidden(prompt: string, input: NodeJS.ReadStream): Promise<string> {
  process.stderr.write(prompt);
  input.setRawMode(true);
  input.resume();
  let typed = '';
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      process.stderr.write('\n');
      outcome();
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish(() => resolve(typed));
        if (char === '\u0003' || char === '\u0004') return finish(() => reject(new UsageError('no password given')));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else if (char >= ' ') typed += char;
        if (typed.length > MAX_BYTES) return finish(() => resolve(typed));
      }
    };
    input.on('data', onData);
  });
}
