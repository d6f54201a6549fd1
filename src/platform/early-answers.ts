/**
 * Answers before routing: a request a service can answer with bytes it already holds whole (a public read
 * cache hit) is answered as soon as Node has parsed it, before Fastify builds a request, a reply and a child
 * logger and runs the hook chain. On a cache hit that work cost more than writing the bytes (bench:content,
 * issue 22); everything else goes on to Fastify as before.
 *
 * Fastify has no hook ahead of its own request handling, so the HTTP server is made here (Fastify's
 * `serverFactory`) with the same timeouts Fastify gives its own. An answer declines by returning `undefined`.
 * Whatever answers is logged and counted like a routed request: the metrics and the debug log line observe
 * early answers through `onAnsweredEarly`. `app.inject` (light-my-request) skips the server and so always
 * reaches Fastify, which must therefore be able to answer every request itself.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyServerOptions } from 'fastify';

/** A Fastify app made by `createHttpServer` (http.ts, which imports this module). */
type HttpServer = object;

/** Answers `request` and returns the route pattern it answered for (`/blog/:slug`), or declines with `undefined`. */
export type EarlyAnswer = (request: IncomingMessage, response: ServerResponse) => string | undefined;

/** What a routed request's `onResponse` hook would see of an early answer. */
export interface AnsweredEarly {
  method: string;
  url: string;
  route: string;
  status: number;
  /** From the moment the request was handed to the server to the answer's last byte given to the socket. */
  milliseconds: number;
}

interface EarlyAnswers {
  answers: EarlyAnswer[];
  observers: Array<(answered: AnsweredEarly) => void>;
}

const registry = new WeakMap<object, EarlyAnswers>();

/**
 * Fastify's `serverFactory`: an HTTP/1.1 server that offers each request to the early answers first, with the
 * timeouts Fastify would have set on a server of its own (lib/server.js `getServerInstance`).
 */
export function earlyAnswerServerFactory(): {
  serverFactory: NonNullable<FastifyServerOptions['serverFactory']>;
  /** Ties the answers to the app, once Fastify has made it. */
  attach(app: HttpServer): void;
} {
  const early: EarlyAnswers = { answers: [], observers: [] };
  return {
    serverFactory: (handler, options) => {
      // Fastify passes its own options, defaults applied (fastify.js).
      const { keepAliveTimeout, requestTimeout, connectionTimeout } = options as Record<string, number | undefined>;
      const server = http.createServer((request, response) => {
        if (early.answers.length === 0 || !answerEarly(early, request, response)) handler(request, response);
      });
      server.keepAliveTimeout = keepAliveTimeout ?? 72_000;
      server.requestTimeout = requestTimeout ?? 0;
      server.setTimeout(connectionTimeout ?? 0);
      return server;
    },
    attach: (app) => registry.set(app, early),
  };
}

function answerEarly(early: EarlyAnswers, request: IncomingMessage, response: ServerResponse): boolean {
  const startedAt = early.observers.length > 0 ? performance.now() : 0;
  for (const answer of early.answers) {
    let route: string | undefined;
    try {
      route = answer(request, response);
    } catch (error) {
      // Outside Fastify nothing would catch it and the process would stop: before anything was written, Fastify
      // answers the request as usual; after, the connection is closed, as Fastify does with a broken response.
      if (!response.headersSent) return false;
      response.destroy(error as Error);
      return true;
    }
    if (route === undefined) continue;
    if (early.observers.length > 0) {
      const answered: AnsweredEarly = {
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        route,
        status: response.statusCode,
        milliseconds: performance.now() - startedAt,
      };
      for (const observe of early.observers) observe(answered);
    }
    return true;
  }
  return false;
}

function earlyAnswersOf(app: HttpServer): EarlyAnswers {
  const early = registry.get(app);
  if (!early) throw new Error('this server was not made by createHttpServer');
  return early;
}

/** Offers every request to `answer` before Fastify routes it. */
export function answerBeforeRouting(app: HttpServer, answer: EarlyAnswer): void {
  earlyAnswersOf(app).answers.push(answer);
}

/** Calls `observe` for every request answered before routing, once its answer is written. */
export function onAnsweredEarly(app: HttpServer, observe: (answered: AnsweredEarly) => void): void {
  earlyAnswersOf(app).observers.push(observe);
}
