/**
 * What the sidecar's HTTP servers share, whichever serves: a running
 * server, where it listens with its bounds on slow clients, and what it
 * hands a handler beside the request on each runtime. `serve.ts` picks the
 * server; `serve_node.ts` and `serve_native.ts` are the servers.
 *
 * @module
 */

import type { Http2Bindings, HttpBindings } from "@hono/node-server";

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

/** The runtime's own server, or `node:http` (see `serve.ts`'s table of bounds). */
export type HttpServerKind = "native" | "node";

/**
 * A handler, and what the server hands it beside the request: on
 * `node:http`, `@hono/node-server`'s bindings (`{ incoming, outgoing }`);
 * on `Deno.serve` its info (`remoteAddr`, `completed`); on `Bun.serve` the
 * server. Each runtime's `getConnInfo` (`@hono/node-server/conninfo`,
 * `hono/deno`, `hono/bun`) reads its own; a Hono app's `fetch` takes them
 * as its environment.
 */
export type Fetch = (
  request: Request,
  bindings: HttpBindings | Http2Bindings | DenoInfo | BunServer,
) => Response | Promise<Response>;

/** `Deno.serve`'s info about a request's connection, as far as used here. */
export interface DenoInfo {
  readonly remoteAddr: unknown;
  readonly completed: Promise<void>;
}

/** `Bun.serve`'s server, as far as used here (and as `hono/bun`'s `getConnInfo` reads it). */
export interface BunServer {
  readonly port: number;
  requestIP(request: Request): unknown;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}
