/**
 * Which connections the sidecar's HTTP server keeps when it is full. A cap
 * that closes every new connection lets a client holding silent
 * connections lock everyone else out for as long as the header timeout;
 * here a new connection is always let in, and the one that gives way is
 * the connection that has waited longest with no request in flight (one
 * that never finished a request, or a kept-alive one between requests).
 * A bound per client address keeps one address from taking most of the
 * places, so its flood pushes out its own connections before anyone
 * else's.
 *
 * @module
 */

import type { Socket } from "node:net";

/** The bounds the admission keeps. */
export interface AdmissionOptions {
  /** Connections open at once. */
  readonly maxConnections: number;
  /** Connections open at once from one client address. */
  readonly maxConnectionsPerClient: number;
}

/** One open connection. */
interface Connection {
  readonly socket: Socket;
  readonly address: string;
  /** Requests in flight. */
  busy: number;
  /** When it last began to wait with none in flight, in the order of {@link Admission}'s count. */
  since: number;
}

/**
 * Tracks every open connection and whether it has a request in flight, and
 * makes room for a new one by closing the connection that has waited
 * longest with none: a connection whose request is being answered is never
 * the one closed.
 *
 * @example
 * ```ts
 * import { createServer } from "node:net";
 * import { Admission } from "./admission.ts";
 *
 * const admission = new Admission({ maxConnections: 64, maxConnectionsPerClient: 16 });
 * const server = createServer((socket) => {
 *   if (!admission.admit(socket)) socket.destroy();
 * });
 * server.close();
 * ```
 */
export class Admission {
  readonly #maxConnections: number;
  readonly #maxPerClient: number;
  /** Every open connection. */
  readonly #connections = new Map<Socket, Connection>();
  /** Each client address's open connections. */
  readonly #clients = new Map<string, Connection[]>();
  /** Counts each time a connection begins to wait: the lowest mark has waited longest. */
  #waits = 0;

  /** Holds at most `options.maxConnections`, and `options.maxConnectionsPerClient` per address. */
  constructor(options: AdmissionOptions) {
    this.#maxConnections = options.maxConnections;
    this.#maxPerClient = Math.min(options.maxConnectionsPerClient, options.maxConnections);
  }

  /** Connections open now. */
  get size(): number {
    return this.#connections.size;
  }

  /**
   * Lets `socket` in, closing the connection of its own address that has
   * waited longest when that address is at its bound, then the longest
   * waiting of all when the server is full.
   *
   * @returns False when every connection in the way has a request in flight: close `socket`.
   */
  admit(socket: Socket): boolean {
    const address = socket.remoteAddress ?? "";
    const client = this.#clients.get(address) ?? [];
    if (client.length >= this.#maxPerClient && !this.#evictFirst(client)) return false;
    if (this.size >= this.#maxConnections && !this.#evictFirst(this.#connections.values())) {
      return false;
    }
    const connection: Connection = { socket, address, busy: 0, since: this.#waits++ };
    this.#clients.set(address, client);
    client.push(connection);
    this.#connections.set(socket, connection);
    socket.once("close", () => this.#forget(socket));
    return true;
  }

  /** A request began on `socket`: it is not to be closed to make room. */
  busy(socket: Socket): void {
    const connection = this.#connections.get(socket);
    if (connection !== undefined) connection.busy++;
  }

  /** A response on `socket` is sent: once none is left, it waits again, as the newest. */
  done(socket: Socket): void {
    const connection = this.#connections.get(socket);
    if (connection !== undefined && --connection.busy === 0) connection.since = this.#waits++;
  }

  /** Closes every connection. */
  closeAll(): void {
    for (const socket of [...this.#connections.keys()]) {
      this.#forget(socket);
      socket.destroy();
    }
  }

  /**
   * Closes the one of `connections` that has waited longest with no
   * request in flight, if any; true when it made room. A search, not an
   * order kept up to date: it is made only when full, where an order kept
   * would cost every request (about 3 µs of CPU a request on Node 20, in
   * bench/node_http_bench.ts, with two sets reordered per request).
   */
  #evictFirst(connections: Iterable<Connection>): boolean {
    let first: Connection | undefined;
    for (const c of connections) {
      if (c.busy === 0 && (first === undefined || c.since < first.since)) first = c;
    }
    if (first === undefined) return false;
    // Forgotten now, not at its close event, so the room is there at once.
    this.#forget(first.socket);
    first.socket.destroy();
    return true;
  }

  #forget(socket: Socket): void {
    const connection = this.#connections.get(socket);
    if (connection === undefined) return;
    this.#connections.delete(socket);
    const client = this.#clients.get(connection.address)!;
    client.splice(client.indexOf(connection), 1);
    if (client.length === 0) this.#clients.delete(connection.address);
  }
}
