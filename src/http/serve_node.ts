/**
 * The sidecar's server on `node:http`, through `@hono/node-server`: the
 * one that holds every bound on slow clients (see `serve.ts`'s table), at
 * the connection too: headers, body and idle timeouts by the server's own
 * options, an idle connection closed at its bound rather than a second
 * past it, and a cap on connections, per client too (`admission.ts`).
 *
 * @module
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { formatHostPort } from "../proto/host_port.ts";
import { HTTP_BOUNDS } from "../core/options.ts";
import { Admission } from "./admission.ts";
import type { Fetch, HttpServer, ListenOptions } from "./http_server.ts";

/** Serves `fetch` on `node:http` at `options`, with every bound it names. */
export async function serveNodeHttp(fetch: Fetch, options: ListenOptions): Promise<HttpServer> {
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

/**
 * The body of a request that `node:http` has received whole, as the bytes
 * it holds: no copy, no listener, no wait for its stream's end.
 * `node:http` hands a request to its handler as soon as its headers are
 * parsed, before its body; one microtask on, Node has parsed the rest of
 * that read from the socket, and a body sent with its headers (every small
 * one, in practice) is all buffered, though the message is marked complete
 * only an event-loop turn later. `@hono/node-server`'s own read waits for
 * that end through four listeners, then copies the bytes into a fresh
 * `ArrayBuffer` (the copy alone about 2 µs of CPU a request on Node 20,
 * the dearest step of a check there).
 *
 * @param bindings What the server handed the handler beside the request.
 * @param maxBytes The longest body taken so; a longer one is left to the
 *   Request's read, which refuses it.
 * @returns Undefined at once where `bindings` are not `node:http`'s; else
 *   a promise of the bytes, or of undefined where the body is not all there
 *   (still arriving, chunked, or not yet in the stream, as on Bun): then
 *   it is read from the Request as it arrives, under the server's request
 *   timeout.
 */
export function receivedBody(
  bindings: unknown,
  maxBytes: number,
): Promise<Uint8Array | undefined> | undefined {
  const incoming = (bindings as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming === undefined || typeof incoming.read !== "function") return undefined;
  return Promise.resolve().then(() => wholeBuffered(incoming, maxBytes));
}

/** What `incoming` holds of its body, if it holds all its declared length, at most `maxBytes`. */
function wholeBuffered(incoming: IncomingMessage, maxBytes: number): Uint8Array | undefined {
  const declared = incoming.headers["content-length"];
  const length = Number(declared);
  if (
    declared === undefined || !(length <= maxBytes) || incoming.readableDidRead ||
    incoming.readableLength !== length
  ) return undefined;
  // The length asked for: Deno's read() with none gives one chunk of several.
  const bytes = (incoming.read(length) as Uint8Array | null) ?? new Uint8Array(0);
  // The stream's end, still to come on Node, is then read as it comes, so
  // that the request ends as it would after any read of its body.
  incoming.resume();
  return bytes;
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
 *
 * A connection's timer is set once as it first goes idle and is not
 * cleared by the requests that follow: when it fires, a connection with a
 * request in flight is left (its answer sets the timer again), and one
 * that went idle again since waits out the rest of its time. A timer made
 * and cleared for every request had cost about 3 µs of CPU a request on
 * Node 20 (bench/node_http_bench.ts, the bare endpoint on this server).
 */
function idleCloser(idleMs: number): IdleCloser {
  /** Each connection's requests in flight, when it last went idle, and its timer if set. */
  interface Idle {
    requests: number;
    since: number;
    timer: ReturnType<typeof setTimeout> | undefined;
  }
  const sockets = new Map<Socket, Idle>();
  const stop = (idle: Idle) => {
    clearTimeout(idle.timer);
    idle.timer = undefined;
  };
  const expire = (socket: Socket, idle: Idle) => {
    idle.timer = undefined;
    if (idle.requests > 0 || socket.destroyed) return;
    const left = idle.since + idleMs - performance.now();
    if (left > 0) idle.timer = setTimeout(expire, left, socket, idle);
    else socket.destroy();
  };
  return {
    busy(socket) {
      let idle = sockets.get(socket);
      if (idle === undefined) {
        sockets.set(socket, idle = { requests: 0, since: 0, timer: undefined });
        const known = idle;
        socket.once("close", () => (stop(known), sockets.delete(socket)));
      }
      idle.requests++;
    },
    done(socket) {
      const idle = sockets.get(socket);
      if (idle === undefined || --idle.requests > 0 || socket.destroyed) return;
      idle.since = performance.now();
      idle.timer ??= setTimeout(expire, idleMs, socket, idle);
    },
    closeAll() {
      for (const idle of sockets.values()) stop(idle);
    },
  };
}
