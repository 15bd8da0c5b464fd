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

/** One client address's connections. */
interface Client {
  /** Every connection it holds. */
  count: number;
  /** Those with no request in flight, the longest waiting first. */
  readonly waiting: Set<Socket>;
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
  /** Every connection with no request in flight, the longest waiting first. */
  readonly #waiting = new Set<Socket>();
  /** Requests in flight, by connection, for those that have any. */
  readonly #busy = new Map<Socket, number>();
  readonly #clientOf = new Map<Socket, string>();
  readonly #clients = new Map<string, Client>();

  /** Holds at most `options.maxConnections`, and `options.maxConnectionsPerClient` per address. */
  constructor(options: AdmissionOptions) {
    this.#maxConnections = options.maxConnections;
    this.#maxPerClient = Math.min(options.maxConnectionsPerClient, options.maxConnections);
  }

  /** Connections open now. */
  get size(): number {
    return this.#clientOf.size;
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
    const client = this.#clients.get(address) ?? { count: 0, waiting: new Set<Socket>() };
    if (client.count >= this.#maxPerClient && !this.#evictFirst(client.waiting)) return false;
    if (this.size >= this.#maxConnections && !this.#evictFirst(this.#waiting)) return false;
    this.#clients.set(address, client);
    client.count++;
    client.waiting.add(socket);
    this.#waiting.add(socket);
    this.#clientOf.set(socket, address);
    socket.once("close", () => this.#forget(socket));
    return true;
  }

  /** A request began on `socket`: it is not to be closed to make room. */
  busy(socket: Socket): void {
    const address = this.#clientOf.get(socket);
    if (address === undefined) return;
    this.#busy.set(socket, (this.#busy.get(socket) ?? 0) + 1);
    this.#waiting.delete(socket);
    this.#clients.get(address)?.waiting.delete(socket);
  }

  /** A response on `socket` is sent: once none is left, it waits again, as the newest. */
  done(socket: Socket): void {
    const address = this.#clientOf.get(socket);
    const left = (this.#busy.get(socket) ?? 1) - 1;
    if (address === undefined || left > 0) {
      if (address !== undefined) this.#busy.set(socket, left);
      return;
    }
    this.#busy.delete(socket);
    this.#waiting.add(socket);
    this.#clients.get(address)?.waiting.add(socket);
  }

  /** Closes every connection. */
  closeAll(): void {
    for (const socket of [...this.#clientOf.keys()]) {
      this.#forget(socket);
      socket.destroy();
    }
  }

  /** Closes the first of `waiting`, if any; true when it made room. */
  #evictFirst(waiting: Set<Socket>): boolean {
    const first = waiting.values().next();
    if (first.done) return false;
    // Forgotten now, not at its close event, so the room is there at once.
    this.#forget(first.value);
    first.value.destroy();
    return true;
  }

  #forget(socket: Socket): void {
    const address = this.#clientOf.get(socket);
    if (address === undefined) return;
    this.#clientOf.delete(socket);
    this.#busy.delete(socket);
    this.#waiting.delete(socket);
    const client = this.#clients.get(address)!;
    client.waiting.delete(socket);
    if (--client.count === 0) this.#clients.delete(address);
  }
}
