/**
 * Email over SMTP (DESIGN 4.8): `SMTP_URL` and `MAIL_FROM`, through nodemailer. Every step is bounded — connecting,
 * the server's greeting, each command, and the whole send — so a silent server fails the send job's attempt (retried
 * with backoff) instead of holding its lease.
 */
import type { Transporter } from 'nodemailer';
import type { MailConfig } from '../../config.js';

/** One email: plain text for every reader, and the same as HTML. */
export interface Email {
  to: { name: string; address: string };
  subject: string;
  text: string;
  html: string;
  /** A stable Message-ID (RFC 5322 §3.6.4), so a mail client can drop the copy a crash mid-send made. */
  messageId: string;
}

export interface Mailer {
  /** Resolves once the server accepted the message; rejects with the server's refusal or a timeout. */
  send(email: Email, signal: AbortSignal): Promise<void>;
  close(): void;
}

export function createMailer(config: MailConfig): Mailer {
  const timeoutMs = (config.timeoutSeconds ?? 10) * 1000;
  // nodemailer (some 3 MB of heap) is loaded with the first email, not at start: most idle servers send none.
  let transport: Promise<Transporter> | undefined;
  const opened = () =>
    (transport ??= import('nodemailer').then(({ createTransport }) =>
      createTransport({
        url: config.url,
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        // Nothing in a message is a file or a URL to fetch: the text is ours, and stays text.
        disableFileAccess: true,
        disableUrlAccess: true,
      }),
    ));
  return {
    async send(email, signal) {
      await (await opened()).sendMail({
        from: config.from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
        messageId: email.messageId,
        // The whole exchange, however the server paces it: a few steps each within the timeout.
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs * 3)]),
      });
    },
    close: () => void transport?.then((opened) => opened.close()),
  };
}
