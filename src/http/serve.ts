/**
 * Serving a fetch handler on whichever runtime runs us: on `Deno.serve` and
 * `Bun.serve` (the runtime's own server, about twice the throughput of its
 * `node:http`), and through `node:http` and `@hono/node-server` on Node, or
 * on any runtime when asked (`server: "node"`).
 *
 * The bounds on slow clients differ by server, as each offers them:
 *
 * | bound | `node:http` | `Bun.serve` | `Deno.serve` |
 * | --- | --- | --- | --- |
 * | headers | `headersTimeoutMs` | about 10 s, fixed by the server (uWS), whatever the option | none |
 * | body (408) | `requestTimeoutMs`, closed | `requestTimeoutMs` from the headers, ours; closed | ours, answered 408, but the connection stays until the client ends its body or hangs up |
 * | idle kept-alive | `idleTimeoutMs` | `idleTimeoutMs` in whole seconds, checked every 4 s | none |
 * | connections, per client | `maxConnections`, `maxConnectionsPerClient` | none | none |
 *
 * Neither native server tells of a connection before its request's headers
 * have come, nor lets a handler close one: what a bound needs at the
 * connection is out of reach there. A server that clients it does not
 * trust can reach serves with `server: "node"`: the sidecar does so on any
 * address but loopback (`--http-server auto`, its default).
 *
 * @module
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Http2Bindings, HttpBindings } from "@hono/node-server";
import { formatHostPort } from "../proto/host_port.ts";
import { messageOf } from "../core/errors.ts";
import { HTTP_BOUNDS } from "../core/options.ts";
import { Admission } from "./admission.ts";
import { problemResponse } from "./problem.ts";

/** A running HTTP server. */
export interface HttpServer {
  /** The address it listens on, as `host:port` with the real port. */
  readonly address: string;
  /**
   * Stops accepting connections, answers requests that arrive meanwhile
   * with 503, waits for those in flight to be answered for at most the
   * drain timeout, then closes every connection: neither a kept-alive
   * connection nor a client that never finishes holds it up longer.
   *
   * @returns Whether every request in flight was answered within the drain timeout.
   */
  close(): Promise<boolean>;
}

/** Where to listen, and the bounds on slow and idle clients. */
export interface ListenOptions {
  /** Host name or IP literal, such as `127.0.0.1`. */
  readonly hostname: string;
  /** Port; 0 picks a free one. */
  readonly port: number;
  /** How long a client may take to send its headers, ms; then 408 and closed. */
  readonly headersTimeoutMs?: number;
  /** How long a client may take to send its whole request, body included, ms. */
  readonly requestTimeoutMs?: number;
  /** How long a kept-alive connection may wait for its next request, ms. */
  readonly idleTimeoutMs?: number;
  /** How long {@link HttpServer.close} waits for requests in flight before it closes their connections, ms. */
  readonly drainTimeoutMs?: number;
  /**
   * Connections open at once; when full, a new one takes the place of the
   * connection that has waited longest with no request in flight.
   */
  readonly maxConnections?: number;
  /** Connections open at once from one client address, held the same way. */
  readonly maxConnectionsPerClient?: number;
  /**
   * Which server: the runtime's own (`Deno.serve`, `Bun.serve`; Node has
   * none but `node:http`), or `node:http` with every bound above.
   *
   * @default {"native"}
   */
  readonly server?: HttpServerKind;
}

/** The runtime's own server, or `node:http` (see the module's table of bounds). */
export type HttpServerKind = "native" | "node";

/**
 * A handler, and what the server hands it beside the request: on
 * `node:http`, `@hono/node-server`'s bindings (`{ incoming, outgoing }`);
 * on `Deno.serve` its info (`remoteAddr`, `completed`); on `Bun.serve` the
 * server. Each runtime's `getConnInfo` (`@hono/node-server/conninfo`,
 * `hono/deno`, `hono/bun`) reads its own; a Hono app's `fetch` takes them
 * as its environment.
 */
type Fetch = (
  request: Request,
  bindings: HttpBindings | Http2Bindings | DenoInfo | BunServer,
) => Response | Promise<Response>;

/**
 * Serves `fetch` at `options`. Rejects, naming the address, when it cannot
 * listen there (a port in use, an address not on this host).
 */
export async function serveHttp(fetch: Fetch, options: ListenOptions): Promise<HttpServer> {
  const where = formatHostPort(options.hostname, options.port);
  try {
    const native = options.server === "node" ? undefined : nativeServer();
    if (native?.Deno) return serveDeno(native.Deno, fetch, options);
    if (native?.Bun) return serveBun(native.Bun, fetch, options);
    return await serveNodeHttp(fetch, options);
  } catch (e) {
    throw new Error(`cannot listen for HTTP on ${where}: ${messageOf(e)}`, { cause: e });
  }
}

async function serveNodeHttp(fetch: Fetch, options: ListenOptions): Promise<HttpServer> {
  const B = HTTP_BOUNDS;
  const headersTimeout = options.headersTimeoutMs ?? B.headersTimeoutMs.default;
  const requestTimeout = options.requestTimeoutMs ?? B.requestTimeoutMs.default;
  const keepAliveTimeout = options.idleTimeoutMs ?? B.idleTimeoutMs.default;
  const drainTimeoutMs = options.drainTimeoutMs ?? B.drainTimeoutMs.default;
  const { createAdaptorServer } = await import("@hono/node-server");
  let closing = false;
  const refusing: Fetch = (request, bindings) =>
    closing
      ? new Response("shutting down\n", { status: 503, headers: { connection: "close" } })
      : fetch(request, bindings);
  const server = createAdaptorServer({
    fetch: refusing,
    serverOptions: {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout,
      // The timeouts are checked this often: a fraction of the shortest.
      connectionsCheckingInterval: Math.max(25, Math.min(1_000, headersTimeout / 4)),
    },
  }) as Server<typeof IncomingMessage, typeof ServerResponse>;
  const admission = new Admission({
    maxConnections: options.maxConnections ?? B.maxConnections.default,
    maxConnectionsPerClient: options.maxConnectionsPerClient ?? B.maxConnectionsPerClient.default,
  });
  // Requests are counted until their response is sent, so that a close
  // waits for a body still arriving and for its answer, then closes every
  // connection at once rather than letting kept-alive ones idle out.
  let active = 0;
  let drained: (() => void) | undefined;
  const idle = idleCloser(keepAliveTimeout);
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    active++;
    idle.busy(req.socket);
    admission.busy(req.socket);
    res.once("close", () => {
      idle.done(req.socket);
      admission.done(req.socket);
      if (--active === 0) drained?.();
    });
  });
  const port = await listen(server, admission, options);
  return {
    address: formatHostPort(options.hostname, port),
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const inTime = active === 0 || await new Promise<boolean>((resolve) => {
        drained = () => resolve(true);
        timer = setTimeout(() => resolve(false), drainTimeoutMs);
      });
      clearTimeout(timer);
      server.closeAllConnections();
      admission.closeAll();
      idle.closeAll();
      await closed;
      return inTime;
    },
  };
}

/**
 * Listens, and asks `admission` about each connection as the server tells
 * of it: on Node and Deno as it is accepted, on Bun once it has sent bytes
 * or about a second after it was made, whichever is first (its listener
 * defers the accept). Not `server.maxConnections`, which refuses every
 * new connection when full and so lets held ones lock everyone out.
 */
async function listen(
  server: Server,
  admission: Admission,
  options: ListenOptions,
): Promise<number> {
  server.on("connection", (socket: Socket) => {
    if (!admission.admit(socket)) socket.destroy();
  });
  return await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      const addr = server.address();
      resolve(typeof addr === "object" && addr !== null ? addr.port : options.port);
    });
  });
}

/** What closes kept-alive connections as their idle time runs out. */
interface IdleCloser {
  /** A request began on `socket`: it is not idle. */
  busy(socket: Socket): void;
  /** A response on `socket` is sent: idle once none is left. */
  done(socket: Socket): void;
  /** Stops every timer. */
  closeAll(): void;
}

/**
 * Closes a connection `idleMs` after its last response, unless another
 * request came. The server's own keep-alive timer runs a second longer
 * than `keepAliveTimeout` on every runtime (Node adds the second for a
 * client whose request crosses the close; Deno and Bun follow Node), so
 * an idle connection would be held a second past the bound: this timer
 * closes it at the bound, and the server's stays as the backstop.
 */
function idleCloser(idleMs: number): IdleCloser {
  const requests = new Map<Socket, number>();
  const timers = new Map<Socket, ReturnType<typeof setTimeout>>();
  const stop = (socket: Socket) => {
    clearTimeout(timers.get(socket));
    timers.delete(socket);
  };
  return {
    busy(socket) {
      stop(socket);
      if (!requests.has(socket)) {
        socket.once("close", () => (stop(socket), requests.delete(socket)));
      }
      requests.set(socket, (requests.get(socket) ?? 0) + 1);
    },
    done(socket) {
      const left = (requests.get(socket) ?? 1) - 1;
      requests.set(socket, left);
      if (left > 0 || socket.destroyed) return;
      timers.set(socket, setTimeout(() => socket.destroy(), idleMs));
    },
    closeAll() {
      for (const socket of timers.keys()) stop(socket);
    },
  };
}

/** `Deno.serve`'s info about a request's connection, as far as used here. */
interface DenoInfo {
  readonly remoteAddr: unknown;
  readonly completed: Promise<void>;
}

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

/** `Bun.serve`'s server, as far as used here (and as `hono/bun`'s `getConnInfo` reads it). */
interface BunServer {
  readonly port: number;
  requestIP(request: Request): unknown;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
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

/** The runtime's own servers, through a typed view of `globalThis` (a bare `Bun` breaks `deno publish`). */
function nativeServer(): { readonly Deno?: DenoServe; readonly Bun?: BunServe } {
  return globalThis as unknown as { Deno?: DenoServe; Bun?: BunServe };
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

/** A request whose answer waits, maybe for its body. */
interface Waiting {
  /** Answers it now, whatever its handler does later. */
  readonly answer: (response: Response) => void;
  /** Whether it is answered. */
  done: boolean;
}

/** The requests begun in one tick of the sweep, those still waiting once it ended. */
interface Tick {
  /** When the tick ended, ms on the monotonic clock. */
  readonly endMs: number;
  readonly waiting: Waiting[];
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
 * that awaits is pushed onto the tick's list, with no clock read: at the
 * end of each tick one timer keeps those still waiting, and answers those
 * of ticks that ended a timeout ago.
 */
export class Answering {
  closing = false;
  readonly #fetch: Fetch;
  readonly #timeoutMs: number;
  /** Requests begun in this tick. */
  #current: Waiting[] = [];
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
    return new Promise<Response>((resolve, reject) => {
      const wait: Waiting = { answer: resolve, done: false };
      this.#current.push(wait);
      response.then((r) => {
        this.#done(wait);
        resolve(r);
      }, (e) => {
        this.#done(wait);
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

  #done(wait: Waiting): void {
    if (wait.done) return;
    wait.done = true;
    if (--this.#active === 0) this.#drained?.();
  }

  /** Ends a tick: keeps its requests still waiting, answers 408 to those of ticks a timeout old. */
  #tick(): void {
    const nowMs = performance.now();
    const waiting = this.#current.filter((w) => !w.done);
    this.#current = [];
    if (waiting.length > 0) this.#ticks.push({ endMs: nowMs, waiting });
    while (this.#ticks.length > 0 && nowMs - this.#ticks[0].endMs >= this.#timeoutMs) {
      for (const wait of this.#ticks.shift()!.waiting) {
        if (wait.done) continue;
        this.#done(wait);
        wait.answer(lateResponse());
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
