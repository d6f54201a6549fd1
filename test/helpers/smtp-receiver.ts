/**
 * A real SMTP server on port 0 (the `smtp-server` package) standing in for the organization's mail server: it asks
 * for the credentials its URL carries, keeps every message it accepts parsed by `mailparser`, and can refuse the
 * next recipients with a temporary error (451), as a busy server does.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedEmail {
  /** The envelope's recipients. */
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

export interface SmtpReceiver {
  /** `smtp://user:pass@127.0.0.1:<port>`, what SMTP_URL is set to. */
  url: string;
  emails: ReceivedEmail[];
  /** How many RCPT TO commands were refused. */
  refusals: number;
  /** Refuses the next `count` recipients with 451 (try again later). */
  refuseNext(count: number): void;
  /** The emails to `address`, once there are `count` of them (fails after `timeoutMs`). */
  waitFor(address: string, count?: number, timeoutMs?: number): Promise<ReceivedEmail[]>;
  /** The emails to `address` now. */
  to(address: string): ReceivedEmail[];
  close(): Promise<void>;
}

const USER = 'atrium';
const PASS = 'mail-password';

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const emails: ReceivedEmail[] = [];
  let toRefuse = 0;
  const receiver = { refusals: 0 };
  const server = new SMTPServer({
    // Plain SMTP on loopback: no certificate to trust, credentials accepted without TLS.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASS) callback(null, { user: USER });
      else callback(Object.assign(new Error('wrong credentials'), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, callback) {
      if (toRefuse > 0) {
        toRefuse -= 1;
        receiver.refusals += 1;
        callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          emails.push({
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            from: parsed.from?.text ?? '',
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            messageId: parsed.messageId ?? '',
          });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const to = (address: string) => emails.filter((email) => email.to.includes(address));
  return {
    url: `smtp://${USER}:${PASS}@127.0.0.1:${port}`,
    emails,
    get refusals() {
      return receiver.refusals;
    },
    refuseNext(count) {
      toRefuse = count;
    },
    to,
    async waitFor(address, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (to(address).length < count) {
        if (Date.now() > deadline) throw new Error(`${to(address).length} of ${count} emails to ${address} arrived in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return to(address);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
