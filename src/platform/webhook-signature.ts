/**
 * Standard Webhooks signing (DESIGN 4.5, standardwebhooks.com): every POST the organization sends to an
 * agent or a webhook capability carries `webhook-id`, `webhook-timestamp` and `webhook-signature:
 * v1,<base64 HMAC-SHA256 of id.timestamp.body>` under a `whsec_…` secret, so receivers verify it with the
 * convention's own libraries in any language. A redelivery keeps its id so the receiver can drop repeats.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signWebhook(secret: string, id: string, body: string, at: Date = new Date()): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

/**
 * A new signing secret as the convention writes it: `whsec_` and 32 random bytes in base64 (a key as long as the
 * HMAC-SHA256 block's hash). The server makes one for whatever the console sets up to be signed, and shows it once.
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
