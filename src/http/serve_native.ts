/**
 * The sidecar's server on the runtime's own, `Deno.serve` or `Bun.serve`,
 * with the bounds each offers (see `serve.ts`'s table) and the request
 * timeout this module adds: a request its handler has not answered in
 * time is answered 408, by one sweep of the requests waiting, with no
 * clock read per request ({@link Answering}).
 *
 * @module
 */

import { formatHostPort } from "../proto/host_port.ts";
import { HTTP_BOUNDS } from "../core/options.ts";
import { problemResponse } from "./problem.ts";
import type { BunServer, DenoInfo, Fetch, HttpServer, ListenOptions } from "./http_server.ts";

interface DenoServer {
  readonly addr: { readonly port: number };
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}

interface DenoServe {
  serve(
    options: {
      hostname: string;
      port: number;
      signal: AbortSignal;
      onListen: () => void;
      onError: (e: unknown) => Response;
    },
    handler: (request: Request, info: DenoInfo) => Response | Promise<Response>,
  ): DenoServer;
}

interface BunServe {
  serve(options: {
    hostname: string;
    port: number;
    idleTimeout: number;
    fetch: (request: Request, server: BunServer) => Response | Promise<Response>;
    error: (e: unknown) => Response;
  }): BunServer;
}

/**
 * Serves `fetch` at `options` on the runtime's own server; undefined on a
 * runtime that has none (Node). The runtime's servers are read through a
 * typed view of `globalThis`: a bare `Bun` breaks `deno publish`.
 */
export function serveNative(fetch: Fetch, options: ListenOptions): HttpServer | undefined {
  const native = globalThis as unknown as { Deno?: DenoServe; Bun?: BunServe };
  if (native.Deno) return serveDeno(native.Deno, fetch, options);
  if (native.Bun) return serveBun(native.Bun, fetch, options);
  return undefined;
}

const internalError = () => new Response("internal error\n", { status: 500 });

function serveDeno(deno: DenoServe, fetch: Fetch, options: ListenOptions): HttpServer {
  const B = HTTP_BOUNDS;
  const requests = new Answering(fetch, options.requestTimeoutMs ?? B.requestTimeoutMs.default);
  const abort = new AbortController();
  const server = deno.serve({
    hostname: options.hostname,
    port: options.port,
    signal: abort.signal,
    onListen: () => {},
    onError: internalError,
  }, (request, info) => requests.answer(request, info));
  return {
    address: formatHostPort(options.hostname, server.addr.port),
    close: async () => {
      const inTime = await requests.drain(options.drainTimeoutMs ?? B.drainTimeoutMs.default);
      // Every connection closed at once, idle ones and any with a request
      // still held. Not after shutdown(): its listener is gone by then, and
      // the abort throws from an event handler (Deno 2.9).
      if (inTime) await server.shutdown();
      else abort.abort();
      await server.finished;
      return inTime;
    },
  };
}

function serveBun(bun: BunServe, fetch: Fetch, options: ListenOptions): HttpServer {
  const B = HTTP_BOUNDS;
  const requests = new Answering(fetch, options.requestTimeoutMs ?? B.requestTimeoutMs.default);
  const idleMs = options.idleTimeoutMs ?? B.idleTimeoutMs.default;
  const server = bun.serve({
    hostname: options.hostname,
    port: options.port,
    // Whole seconds, from 1 to 255 (0 would turn it off).
    idleTimeout: Math.min(255, Math.max(1, Math.ceil(idleMs / 1_000))),
    fetch: (request, server) => requests.answer(request, server),
    error: internalError,
  });
  return {
    address: formatHostPort(options.hostname, server.port),
    close: async () => {
      const inTime = await requests.drain(options.drainTimeoutMs ?? B.drainTimeoutMs.default);
      // Closes every connection still open, a request held in one too.
      await server.stop(true);
      return inTime;
    },
  };
}

/**
 * The runtime's own `Response` class. `@hono/node-server`, once loaded in
 * the process, puts its own over the global one (a lighter class that
 * extends it), and the native servers take only the runtime's.
 */
const OWN_RESPONSE: typeof Response = ((global: typeof Response) => {
  const parent = Object.getPrototypeOf(global);
  return parent === Function.prototype ? global : parent;
})(globalThis.Response);

/** `response` as the runtime's own class, once `@hono/node-server` put its own over it. */
function ownResponse(response: Response | Promise<Response>): Response | Promise<Response> {
  if (response instanceof Promise) return response.then(ownResponse) as Promise<Response>;
  if (Object.getPrototypeOf(response) === OWN_RESPONSE.prototype) return response;
  return new OWN_RESPONSE(response.body, response);
}

/** How a request still waiting is answered, whatever its handler does later. */
type Answer = (response: Response) => void;

/** The requests begun in one tick of the sweep that still wait, once it ended. */
interface Tick {
  /** When the tick ended, ms on the monotonic clock. */
  readonly endMs: number;
  readonly waiting: Set<Answer>;
}

/**
 * What a native server's handler is wrapped in: 503 once closing, and a
 * request its handler has not answered within the request timeout (its
 * body still coming, or never finished) answered 408 with
 * `Connection: close`. The native servers hand a handler the request once
 * its headers are in, so the timeout counts from there, and a request is
 * answered at most two ticks after it (a tick is a quarter of the
 * timeout, at most a second).
 * A handler that answers at once (not a promise) costs nothing more; one
 * that awaits joins the tick's set, with no clock read, and leaves it when
 * answered: at the end of each tick one timer keeps that set of those
 * still waiting, and answers those of ticks that ended a timeout ago.
 * A request leaves its set as it is answered, rather than being marked
 * and dropped at the tick's end, so that nothing of it outlives its
 * answer: a list of every request of the tick held their answers alive
 * for up to a second, into the collector's old space, which cost more
 * than the rest of the wrapper.
 */
export class Answering {
  closing = false;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;
  /** Requests begun in this tick and still waiting. */
  #current = new Set<Answer>();
  /** Earlier ticks, the oldest first. */
  readonly #ticks: Tick[] = [];
  /** Handlers that have not answered. */
  #active = 0;
  #sweep: ReturnType<typeof setInterval> | undefined;
  #drained: (() => void) | undefined;

  constructor(fetch: Fetch, timeoutMs: number) {
    this.#fetch = fetch;
    this.#timeoutMs = timeoutMs;
  }

  answer(request: Request, bindings: DenoInfo | BunServer): Response | Promise<Response> {
    if (this.closing) {
      return new OWN_RESPONSE("shutting down\n", { status: 503, headers: { connection: "close" } });
    }
    let response = this.#fetch(request, bindings);
    if (globalThis.Response !== OWN_RESPONSE) response = ownResponse(response);
    if (!(response instanceof Promise)) return response;
    this.#sweep ??= setInterval(
      () => this.#tick(),
      Math.max(25, Math.min(1_000, this.#timeoutMs / 4)),
    );
    this.#active++;
    const tick = this.#current;
    return new Promise<Response>((resolve, reject) => {
      tick.add(resolve);
      response.then((r) => {
        this.#done(tick, resolve);
        resolve(r);
      }, (e) => {
        this.#done(tick, resolve);
        reject(e);
      });
    });
  }

  /**
   * Answers 503 from now on, waits at most `ms` for every handler still
   * running to answer, and stops the sweep.
   *
   * @returns Whether they all answered in time.
   */
  async drain(ms: number): Promise<boolean> {
    this.closing = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const inTime = this.#active === 0 || await new Promise<boolean>((resolve) => {
      this.#drained = () => resolve(true);
      timer = setTimeout(() => resolve(false), ms);
    });
    clearTimeout(timer);
    clearInterval(this.#sweep);
    return inTime;
  }

  /** Takes `answer` out of `tick`, once: by its handler's answer or by the 408. */
  #done(tick: Set<Answer>, answer: Answer): void {
    if (tick.delete(answer) && --this.#active === 0) this.#drained?.();
  }

  /** Ends a tick: keeps its requests still waiting, answers 408 to those of ticks a timeout old. */
  #tick(): void {
    const nowMs = performance.now();
    if (this.#current.size > 0) {
      this.#ticks.push({ endMs: nowMs, waiting: this.#current });
      this.#current = new Set();
    }
    while (this.#ticks.length > 0 && nowMs - this.#ticks[0].endMs >= this.#timeoutMs) {
      const { waiting } = this.#ticks.shift()!;
      for (const answer of waiting) {
        this.#done(waiting, answer);
        answer(lateResponse());
      }
    }
  }
}

/** 408, closing the connection (as the runtime's own class). */
function lateResponse(): Response {
  const late = problemResponse(408, "the request was not received in time");
  return new OWN_RESPONSE(late.body, {
    status: 408,
    headers: { "content-type": late.headers.get("content-type") ?? "", connection: "close" },
  });
}
