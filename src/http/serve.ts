/**
 * Serving a fetch handler on whichever runtime runs us, through Node's
 * `node:http` server and `@hono/node-server`: Deno and Bun implement that
 * server with its timeouts and its connection bound, where `Deno.serve` has
 * none and `Bun.serve` no bound on connections or on a slow body. One
 * server, so a slow client is held to the same bounds on every runtime.
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
}

/**
 * A handler, and what the server hands it beside the request:
 * `@hono/node-server`'s bindings, `{ incoming, outgoing }`, the `node:http`
 * request and response, on Deno and Bun as on Node since every runtime is
 * served through that server (so never `Deno.serve`'s info or Bun's server).
 * The `getConnInfo` of `@hono/node-server/conninfo` reads them, so they
 * are passed on; a Hono app's `fetch` takes them as its environment.
 */
type Fetch = (
  request: Request,
  bindings: HttpBindings | Http2Bindings,
) => Response | Promise<Response>;

/**
 * Serves `fetch` at `options`. Rejects, naming the address, when it cannot
 * listen there (a port in use, an address not on this host).
 */
export async function serveHttp(fetch: Fetch, options: ListenOptions): Promise<HttpServer> {
  const where = formatHostPort(options.hostname, options.port);
  try {
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
