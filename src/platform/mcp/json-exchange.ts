/**
 * The transport of one JSON-mode POST (2025-03-26 transport, "Sending Messages": the server may answer a POST
 * with one `application/json` body): it hands the request's messages to a connected `Server` and resolves with
 * the JSON text of its answers once every request among them has one.
 *
 * It does what the SDK's stateless `WebStandardStreamableHTTPServerTransport` does for such a POST, without
 * building a web `Request`, a web `Response` and a stream around a body Fastify already holds: on the hot path
 * (every `tools/call` of a session) those were a third of the endpoint's own cost. The endpoint has already
 * applied every HTTP rule the SDK transport would (Accept, Content-Type, session, protocol version, batch size);
 * the messages are checked here with the SDK's own JSON-RPC schema, so a malformed one is refused exactly as the
 * SDK refuses it. Server-to-client messages (progress, log notifications) have no channel in a JSON answer and
 * are dropped, as the SDK's transport drops them in JSON mode.
 */
import { parseJSONRPCMessage, type JSONRPCMessage, type RequestId, type Transport } from '@modelcontextprotocol/server';

export class JsonExchange implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];

  /** Each request's answer by id, in the order the requests came; undefined until answered. */
  private readonly answers = new Map<RequestId, JSONRPCMessage | undefined>();
  private unanswered = 0;
  private finish!: (text: string) => void;
  /** The JSON body to send: one answer, or an array for a batch; undefined for notifications only (202). */
  readonly answered: Promise<string> | undefined;

  /** Throws the SDK's validation error when a message is not JSON-RPC. */
  constructor(readonly messages: JSONRPCMessage[]) {
    for (const message of messages) {
      if ('method' in message && 'id' in message) this.answers.set(message.id, undefined);
    }
    this.unanswered = this.answers.size;
    this.answered = this.unanswered > 0 ? new Promise((resolve) => (this.finish = resolve)) : undefined;
  }

  /** The messages of a parsed body, checked against the SDK's JSON-RPC schema (which throws on a bad one). */
  static parse(body: unknown): JSONRPCMessage[] {
    return (Array.isArray(body) ? body : [body]).map((message) => parseJSONRPCMessage(message));
  }

  async start(): Promise<void> {}

  /** Delivers the messages to the connected server; call once, after `connect`. */
  deliver(): void {
    for (const message of this.messages) this.onmessage?.(message);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Outgoing messages come from the SDK's own protocol layer: an answer has an id and a result or an error.
    const id = 'method' in message || !('id' in message) ? undefined : message.id;
    if (id === undefined || !this.answers.has(id) || this.answers.get(id)) return;
    this.answers.set(id, message);
    this.unanswered -= 1;
    if (this.unanswered > 0) return;
    const answers = [...this.answers.values()];
    this.finish(JSON.stringify(answers.length === 1 ? answers[0] : answers));
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}
