/**
 * An MCP Streamable HTTP endpoint (2025-03-26 transport) on a Fastify server, with sessions in the database.
 *
 * The SDK's session-keeping transport holds sessions in one process's memory, so every request here gets a
 * fresh, stateless `WebStandardStreamableHTTPServerTransport` and a fresh low-level `Server`, and the session
 * rules of the transport spec are applied around them from the `mcp_sessions` table:
 *
 * - `initialize` creates the session row and its id goes back in `Mcp-Session-Id`;
 * - every later request must carry that header: missing → 400, unknown or ended → 404;
 * - `DELETE` ends the session.
 *
 * Before any of that, each request passes the DNS-rebinding check (foreign Host or Origin → 403) and the
 * service's own authentication, and a POST passes our body and batch limits (the SDK would take batches of
 * 100). The transport's web `Response` goes out through `reply.send`, so Fastify's hooks and logging still run.
 *
 * Per request only the `Server` object, its handlers (closures over prepared data) and the transport are
 * built; anything costly (tool schemas, JSON Schema documents) belongs in the caller's start-up code. A session's
 * POST answered as JSON, the common case, goes through a `JsonExchange` (json-exchange.ts) instead of the SDK's
 * web transport, and its answer is sent as text.
 *
 * Revision `2026-07-28` has no protocol sessions: each request carries its version, client and capabilities in
 * `_meta`. When the endpoint serves it (`modernProtocolVersions`), a POST the SDK's `isLegacyRequest` does not
 * classify as 2025-era (asked only when `mayBeModern` leaves a doubt) goes to the SDK's own strict modern handler
 * (`createMcpHandler`, `legacy: 'reject'`), built from the same server factory, after the same host,
 * authentication, body and batch checks; everything else (initialize, session requests, GET, DELETE) keeps the
 * session rules above.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  isInitializeRequest,
  isJsonContentType,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type Implementation,
  type InitializeRequest,
  type ServerCapabilities,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { ChangeFeed } from '../changes.js';
import type { Db } from '../database.js';
import type { HttpServer } from '../http.js';
import { chooseResponseMode, type ResponseMode } from './accept.js';
import { allowedHostnames, checkHostAndOrigin, type AllowedHostsSource } from './host-guard.js';
import { JsonExchange } from './json-exchange.js';
import { mayBeModern } from './may-be-modern.js';
import { RPC, sendRpcError } from './json-rpc.js';
import { SessionStore, type McpSession } from './sessions.js';

/**
 * The client behind a request and the protocol revision it speaks. A 2025 revision's client is known from its
 * session (what it sent in `initialize`); a `2026-07-28` client sends the same facts in every request's `_meta`.
 */
export interface McpClient {
  protocolVersion: string;
  /** `clientInfo.name`, self-reported: for display and records, never for decisions. */
  name: string;
  version: string | null;
  /** The capabilities the client declared: whether it takes tasks, URL-mode elicitation, MCP Apps, … */
  capabilities: Record<string, unknown>;
}

/** What a request's handlers know about who is calling. */
export interface McpCall<Principal> {
  /** The protocol session, for the 2025 revisions; `2026-07-28` has none. */
  session?: McpSession;
  client: McpClient;
  principal: Principal;
  /**
   * A handler may set the HTTP status of a JSON answer: the org server answers 500 when a tool outruns its
   * deadline (spec 7.1), while the JSON-RPC error inside says why.
   */
  http: { status?: number };
}

export interface McpEndpointOptions<Principal> {
  /** Route path, normally `/mcp`. */
  path: string;
  db: Db;
  /** Names this endpoint's rows in `mcp_sessions` (`content`, `org`); a session is only valid where it was made. */
  sessionScope: string;
  /** What `initialize` (and `server/discover`) says of the server; a function when it differs by revision. */
  serverInfo: Implementation | ((client: McpClient) => Implementation);
  capabilities: ServerCapabilities;
  /**
   * The protocol versions served, preferred first. `initialize` answers the client's version when listed and
   * the first entry otherwise (the client then decides whether to carry on); later requests naming another
   * version in `MCP-Protocol-Version` are refused by the transport.
   */
  protocolVersions: readonly [string, ...string[]];
  /**
   * The sessionless revisions served besides, through the SDK's modern path (`server/discover`, the `_meta`
   * envelope). Absent or empty: 2025-era traffic only, and a modern request meets the session rules.
   */
  modernProtocolVersions?: readonly ModernProtocolVersion[];
  /** The names the service is reached by: Host and Origin must name one of them (host-guard.ts). */
  hosts: AllowedHostsSource;
  /**
   * Verifies the request's credentials before its body is read; throws the service's catalogued error (401,
   * 403) to refuse it, after setting any challenge header (`WWW-Authenticate`) it needs on `reply`.
   */
  authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Principal> | Principal;
  /** The principal's stable id stored with the session; a session is only usable by the same principal. */
  principalId?(principal: Principal): string | null;
  /** Installs the request handlers (`tools/list`, `tools/call`, …) on one request's fresh `Server`. */
  installHandlers(server: Server, call: McpCall<Principal>): void;
  /** Largest POST body in bytes; default 1 MiB (spec section 8). */
  maxBodyBytes?: number;
  /** Most messages in one JSON-RPC batch; default 25 (spec section 8). */
  maxBatchLength?: number;
  /** SSE keep-alive comment interval for open streams, in ms; default 15 s. */
  keepAliveMs?: number;
  /** Keep live sessions in memory, kept exact across processes by this change feed (see SessionStoreOptions). */
  changes?: ChangeFeed;
}

/** The sessionless revisions the installed SDK's `createMcpHandler` serves. */
export type ModernProtocolVersion = '2026-07-28';

const MiB = 1024 * 1024;

export function registerMcpEndpoint<Principal>(app: HttpServer, options: McpEndpointOptions<Principal>): void {
  const maxBodyBytes = options.maxBodyBytes ?? MiB;
  const maxBatchLength = options.maxBatchLength ?? 25;
  const principalId = options.principalId ?? (() => null);
  const principals = new WeakMap<FastifyRequest, Principal>();
  const allowed = allowedHostnames(options.hosts);
  const newServer = createServerFactory(options);
  const sessions = new SessionStore(options.db, options.sessionScope, { changes: options.changes });
  /** Open GET streams, closed on shutdown so that draining does not wait for clients to hang up. */
  const openStreams = new Set<WebStandardStreamableHTTPServerTransport>();
  /** The call of each modern request, keyed by the web Request the SDK hands back to the factory. */
  const modernCalls = new WeakMap<Request, McpCall<Principal>>();
  const modern = options.modernProtocolVersions?.length
    ? createMcpHandler(({ requestInfo }) => newServer(modernCalls.get(requestInfo!)!), {
        legacy: 'reject',
        keepAliveMs: options.keepAliveMs,
        maxRequestBodySize: maxBodyBytes,
      })
    : undefined;

  /** 2026-07-28: one request, no session; the SDK checks the envelope, headers and revision before the factory runs. */
  async function serveModern(webRequest: Request, call: McpCall<Principal>, body: unknown): Promise<Response> {
    modernCalls.set(webRequest, call);
    const response = await modern!.fetch(webRequest, { parsedBody: body });
    if (call.http.status === undefined || !response.headers.get('content-type')?.startsWith('application/json')) return response;
    return new Response(response.body, { status: call.http.status, headers: response.headers });
  }

  /** Runs one request through a fresh server and stateless transport, and sends the web Response. */
  async function serve(request: FastifyRequest, reply: FastifyReply, call: McpCall<Principal>, init: TransportInit): Promise<Response> {
    const server = newServer(call);
    const transport = new WebStandardStreamableHTTPServerTransport({
      enableJsonResponse: init.mode === 'json',
      keepAliveMs: options.keepAliveMs,
    });
    transport.onerror = (error) => request.log.debug({ err: error }, 'mcp transport refused a request');
    await server.connect(transport);
    reply.raw.once('close', () => {
      openStreams.delete(transport);
      // A JSON answer is only sent once every handler has finished, so a fully sent one leaves nothing open and
      // the pair is left to the garbage collector: closing builds an SDK error with a stack trace per request.
      if (init.mode === 'json' && reply.raw.writableFinished) return;
      void server.close();
    });
    if (request.method === 'GET') openStreams.add(transport);
    const response = await transport.handleRequest(init.webRequest ?? toWebRequest(request), { parsedBody: init.body });
    if (init.mode !== 'json' || call.http.status === undefined) return response;
    return new Response(response.body, { status: call.http.status, headers: response.headers });
  }

  /** 2025-03-26 transport, "Session Management": the header is required after initialize. */
  async function sessionOf(request: FastifyRequest, reply: FastifyReply): Promise<McpSession | undefined> {
    const id = request.headers['mcp-session-id'];
    if (typeof id !== 'string' || !id) {
      sendRpcError(reply, 400, RPC.serverError, 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const session = await sessions.find(id);
    if (!session || session.principal !== principalId(principals.get(request) as Principal)) {
      sendRpcError(reply, 404, RPC.sessionNotFound, 'Session not found');
      return undefined;
    }
    // 2025-06-18 transport, "Protocol Version Header": an invalid version → 400. With several revisions served, a
    // header naming another revision than the session negotiated is invalid for it (the SDK only checks the list).
    const version = request.headers['mcp-protocol-version'];
    if (typeof version === 'string' && version !== session.protocolVersion) {
      sendRpcError(reply, 400, RPC.serverError, `Bad Request: Unsupported protocol version: ${version} (this session speaks ${session.protocolVersion})`);
      return undefined;
    }
    return session;
  }

  async function handlePost(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    // Fastify would also read text/plain; the transport speaks JSON only (2025-03-26 transport, "Sending Messages").
    if (!isJsonContentType(request.headers['content-type'] ?? null)) {
      return sendRpcError(reply, 415, RPC.serverError, 'Unsupported Media Type: Content-Type must be application/json');
    }
    let body: unknown;
    try {
      body = JSON.parse(request.body as string);
    } catch {
      return sendRpcError(reply, 400, RPC.parseError, 'Parse error: invalid JSON');
    }
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length === 0) return sendRpcError(reply, 400, RPC.invalidRequest, 'Invalid Request: empty batch');
    // Spec 7.1: a batch over the limit is refused as a whole, before anything runs.
    if (messages.length > maxBatchLength) {
      return sendRpcError(reply, 413, RPC.invalidRequest, `Invalid Request: a batch may hold at most ${maxBatchLength} messages`);
    }
    const mode = chooseResponseMode(request.headers.accept);
    if (!mode) return sendRpcError(reply, 406, RPC.serverError, 'Not Acceptable: accept application/json or text/event-stream');

    const principal = principals.get(request) as Principal;
    const webRequest = modern && mayBeModern(request.headers['mcp-protocol-version'], messages) ? toWebRequest(request) : undefined;
    if (webRequest && !(await isLegacyRequest(webRequest, body, { maxRequestBodySize: maxBodyBytes }))) {
      return reply.send(await serveModern(webRequest, { client: envelopeClient(body), principal, http: {} }, body));
    }
    const initialize = messages.find((message) => isObject(message) && message.method === 'initialize');
    if (initialize && messages.length === 1) {
      if (!isInitializeRequest(initialize)) {
        return sendRpcError(reply, 400, RPC.invalidParams, 'Invalid initialize request: params need protocolVersion, capabilities and clientInfo', idOf(initialize));
      }
      const session = await startSession(initialize as unknown as InitializeRequest, principal);
      const response = await serve(request, reply, sessionCall(session, principal), { mode, body, webRequest });
      // The session exists only if the client was told about it.
      if (response.ok) reply.header('mcp-session-id', session.id);
      else await sessions.end(session.id);
      return reply.send(response);
    }
    if (initialize) {
      // The transport refuses an initialize inside a batch (2025-03-26: initialize is never batched).
      return sendRpcError(reply, 400, RPC.invalidRequest, 'Invalid Request: initialize must be sent on its own', idOf(initialize));
    }
    const session = await sessionOf(request, reply);
    if (!session) return reply;
    if (mode === 'json') return exchangeJson(request, reply, sessionCall(session, principal), body);
    return reply.send(await serve(request, reply, sessionCall(session, principal), { mode, body }));
  }

  /** A session's JSON-mode POST, the hot path, through a JsonExchange rather than the SDK's web transport. */
  async function exchangeJson(request: FastifyRequest, reply: FastifyReply, call: McpCall<Principal>, body: unknown): Promise<unknown> {
    let exchange: JsonExchange;
    try {
      exchange = new JsonExchange(JsonExchange.parse(body));
    } catch (error) {
      request.log.debug({ err: error }, 'mcp transport refused a request');
      // The SDK transport's own answer to a message that is not JSON-RPC.
      return sendRpcError(reply, 400, RPC.parseError, 'Parse error: Invalid JSON-RPC message');
    }
    const server = newServer(call);
    await server.connect(exchange);
    // A client that hangs up before its answer aborts the handlers still running, as closing the SDK transport does.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) void server.close();
    });
    exchange.deliver();
    if (!exchange.answered) return reply.code(202).send();
    const text = await exchange.answered;
    return reply
      .code(call.http.status ?? 200)
      .type('application/json')
      .send(text);
  }

  function startSession(initialize: InitializeRequest, principal: Principal): Promise<McpSession> {
    const requested = initialize.params.protocolVersion;
    // The same choice the SDK's initialize handler makes (so the stored version is the one answered).
    const negotiated = options.protocolVersions.includes(requested) ? requested : options.protocolVersions[0];
    return sessions.create({
      protocolVersion: negotiated,
      clientName: initialize.params.clientInfo.name,
      clientVersion: initialize.params.clientInfo.version,
      clientCapabilities: initialize.params.capabilities as Record<string, unknown>,
      principal: principalId(principal),
    });
  }

  async function handleGet(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const session = await sessionOf(request, reply);
    if (!session) return reply;
    const response = await serve(request, reply, sessionCall(session, principals.get(request) as Principal), { mode: 'sse' });
    // Nothing may be written on this stream for a long while; an opening comment flushes the headers now.
    return reply.send(response.ok && response.body ? withOpeningComment(response) : response);
  }

  async function handleDelete(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const session = await sessionOf(request, reply);
    if (!session) return reply;
    const response = await serve(request, reply, sessionCall(session, principals.get(request) as Principal), { mode: 'json' });
    if (response.ok) await sessions.end(session.id);
    return reply.send(response);
  }

  app.register(async (scope) => {
    // The body stays text here: a parse failure is answered as a JSON-RPC parse error, not a REST 400.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: maxBodyBytes }, (_request, text, done) =>
      done(null, text),
    );

    scope.addHook('onRequest', async (request, reply) => {
      const check = checkHostAndOrigin(request.headers.host, request.headers.origin, allowed);
      if (!check.ok) return sendRpcError(reply, 403, RPC.serverError, `Forbidden: ${check.message}`);
      principals.set(request, await options.authenticate(request, reply));
    });

    scope.post(options.path, { bodyLimit: maxBodyBytes }, handlePost);
    scope.get(options.path, handleGet);
    scope.delete(options.path, handleDelete);
  });

  app.addHook('preClose', async () => {
    await Promise.all([...openStreams].map((transport) => transport.close()));
    await modern?.close();
  });
}

/**
 * What each request builds: a low-level `Server` pinned to the endpoint's protocol versions, with the
 * caller's handlers installed. The low-level class, not `McpServer`, because `McpServer.registerTool` turns
 * each schema into JSON Schema when called — per request here — while these handlers serve lists built once.
 * Exported so benchmarks can measure exactly this per-request cost.
 */
export function createServerFactory<Principal>(
  options: Pick<McpEndpointOptions<Principal>, 'serverInfo' | 'capabilities' | 'protocolVersions' | 'installHandlers'>,
): (call: McpCall<Principal>) => Server {
  // One schema validator for every per-request Server: the SDK would otherwise build an Ajv instance each time.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  return (call) => {
    const serverInfo = typeof options.serverInfo === 'function' ? options.serverInfo(call.client) : options.serverInfo;
    const server = new Server(serverInfo, {
      capabilities: options.capabilities,
      supportedProtocolVersions: [...options.protocolVersions],
      jsonSchemaValidator,
    });
    options.installHandlers(server, call);
    return server;
  };
}

function sessionCall<Principal>(session: McpSession, principal: Principal): McpCall<Principal> {
  const client = { protocolVersion: session.protocolVersion, name: session.clientName, version: session.clientVersion, capabilities: session.clientCapabilities };
  return { session, client, principal, http: {} };
}

/**
 * The client of a 2026-07-28 request, from its `_meta` envelope (SEP-2575 / 2026-07-28 "Per-request metadata").
 * The SDK refuses a missing or malformed envelope before any handler runs, so the fallbacks only ever describe
 * a notification, which has no handler that reads them.
 */
function envelopeClient(body: unknown): McpClient {
  const params = isObject(body) && isObject(body.params) ? body.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const info = isObject(meta[CLIENT_INFO_META_KEY]) ? meta[CLIENT_INFO_META_KEY] : {};
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  return {
    protocolVersion: typeof meta[PROTOCOL_VERSION_META_KEY] === 'string' ? meta[PROTOCOL_VERSION_META_KEY] : '',
    name: typeof info.name === 'string' ? info.name : '',
    version: typeof info.version === 'string' ? info.version : null,
    capabilities: isObject(capabilities) ? capabilities : {},
  };
}

interface TransportInit {
  mode: ResponseMode;
  body?: unknown;
  /** The request as the SDK reads it, when routing already built it. */
  webRequest?: Request;
}

/**
 * The request as the SDK transport reads it. The body was already parsed; Accept is normalised to what the
 * transport insists on, since the response mode was chosen from the real header (accept.ts).
 */
function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  if (request.method === 'POST') {
    headers.set('accept', 'application/json, text/event-stream');
    headers.set('content-type', 'application/json');
  }
  return new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, { method: request.method, headers });
}

function withOpeningComment(response: Response): Response {
  const opening = new TextEncoder().encode(': stream open\n\n');
  const reader = response.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(opening);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function idOf(message: unknown): string | number | null {
  const id = isObject(message) ? message.id : null;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
