/**
 * The background task of a guard in a fleet: a UDP socket and a timer
 * under a sans-I/O {@link FleetNode}. The timer fires a few times per
 * protocol period and drives `handleTimeout`; the socket feeds
 * `handleDatagram`; after either, whatever the node wants sent is sent. The
 * request path never waits on any of it.
 *
 * @module
 */

import { lookup } from "node:dns/promises";
import { type AuthConfig, judge, seal, type Verdict } from "../core/auth.ts";
import type { FleetNode } from "../core/fleet_node.ts";
import { webCryptoMac } from "./hmac.ts";
import { Address } from "../proto/mod.ts";
import type { Clock } from "./clock.ts";
import { bindDatagram, type DatagramSocket, type Remote } from "./socket.ts";
import { LEAVE_WAIT_MS } from "../core/options.ts";
import { settledWithin } from "./within.ts";

/** Counters of the task itself. */
export interface GossipCounters {
  /** Socket errors survived (sends that failed, receive errors). */
  readonly socketErrors: number;
  /** Datagrams sent. */
  readonly datagramsSent: number;
  /** Bytes sent. */
  readonly bytesSent: number;
  /** Datagrams received. */
  readonly datagramsReceived: number;
  /** Bytes received. */
  readonly bytesReceived: number;
  /** Datagrams dropped for coming unsigned under Required. */
  readonly unsigned: number;
  /** Datagrams dropped for a tag no secret of this node made. */
  readonly badTag: number;
}

/** What the task needs to start. */
export interface GossipOptions {
  /** The IP literal to bind. */
  readonly bindHost: string;
  /** The port to bind; 0 picks one. */
  readonly bindPort: number;
  /** Makes the node once the port is known (the advertised address may take it). */
  readonly makeNode: (boundPort: number) => FleetNode;
  /** The monotonic clock. */
  readonly clock: Clock;
  /** The protocol period. */
  readonly protocolPeriodMs: number;
  /** Called once if the task dies of a bug: the guard then holds every key at the floor. */
  readonly onDeath: (error: unknown) => void;
  /** How gossip is signed and checked. */
  readonly auth: AuthConfig;
}

/** A running background task. */
export class GossipTask {
  readonly node: FleetNode;
  readonly #socket: DatagramSocket;
  readonly #options: GossipOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running = true;
  #socketErrors = 0;
  #sent = 0;
  #bytesSent = 0;
  #received = 0;
  #bytesReceived = 0;
  #unsigned = 0;
  #badTag = 0;
  #auth: AuthConfig;
  /** Datagrams being signed: a leave waits for them before it closes the socket. */
  readonly #signing = new Set<Promise<void>>();

  private constructor(node: FleetNode, socket: DatagramSocket, options: GossipOptions) {
    this.node = node;
    this.#socket = socket;
    this.#options = options;
    this.#auth = options.auth;
  }

  /** How gossip is signed and checked now. */
  get auth(): AuthConfig {
    return this.#auth;
  }

  /** Takes a step of a signing rollout: the next datagram is sent, and checked, by it. */
  setAuth(config: AuthConfig): void {
    this.#auth = config;
  }

  /** Binds the socket, makes the node, and starts the timer. */
  static async start(options: GossipOptions): Promise<GossipTask> {
    // The socket delivers from the moment it is bound; the task exists a
    // moment later, once the node can be made with the bound port.
    const ref: { task?: GossipTask } = {};
    const socket = await bindDatagram(options.bindHost, options.bindPort, {
      message: (bytes, from) => {
        if (ref.task) ref.task.#receive(bytes, from);
      },
      error: () => {
        if (ref.task) ref.task.#socketErrors++;
      },
    });
    const task = ref.task = new GossipTask(options.makeNode(socket.port), socket, options);
    task.#timer = setInterval(() => task.#tick(), Math.max(5, options.protocolPeriodMs / 4));
    task.#tick();
    return task;
  }

  /** Whether the task runs: false once it left, or died. */
  get running(): boolean {
    return this.#running;
  }

  /** The port the socket is bound to. */
  get port(): number {
    return this.#socket.port;
  }

  /** What the task has done. */
  counters(): GossipCounters {
    return {
      socketErrors: this.#socketErrors,
      datagramsSent: this.#sent,
      bytesSent: this.#bytesSent,
      datagramsReceived: this.#received,
      bytesReceived: this.#bytesReceived,
      unsigned: this.#unsigned,
      badTag: this.#badTag,
    };
  }

  /**
   * Tells the peers this node is going, then stops the timer and closes the
   * socket once the goodbyes are out: signed, and handed to the system,
   * within {@link LEAVE_WAIT_MS} in all.
   */
  async leave(): Promise<void> {
    if (!this.#running && this.#timer === undefined) return;
    this.#stop();
    // The wall clock, not the node's: the bound is on how long a shutdown
    // takes, and a test's clock may stand still.
    const deadlineMs = performance.now() + LEAVE_WAIT_MS;
    try {
      this.node.leave();
      this.#flush();
      await settledWithin(this.#signing, LEAVE_WAIT_MS);
    } finally {
      await this.#socket.close(Math.max(0, deadlineMs - performance.now()));
    }
  }

  #receive(bytes: Uint8Array, from: Remote): void {
    if (!this.#running) return;
    this.#received++;
    this.#bytesReceived += bytes.length;
    let address: Address;
    try {
      address = Address.parse(
        from.hostname.includes(":")
          ? `[${from.hostname}]:${from.port}`
          : `${from.hostname}:${from.port}`,
      );
    } catch {
      return; // not an address a member can have; the node never hears it
    }
    const verdict = judge(this.#auth, bytes, webCryptoMac);
    if (verdict instanceof Promise) {
      verdict.then((v) => this.#take(v, address), (e) =>
        this.#guard(() => {
          throw e;
        }));
    } else {
      this.#take(verdict, address);
    }
  }

  #take(verdict: Verdict, from: Address): void {
    if (!this.#running) return;
    if (!verdict.accept) {
      if (verdict.reason === "unsigned") this.#unsigned++;
      else this.#badTag++;
      return;
    }
    this.#guard(() => {
      this.node.handleDatagram(this.#options.clock(), from, verdict.bytes);
      this.#flush();
    });
  }

  #tick(): void {
    if (!this.#running) return;
    this.#guard(() => {
      this.node.handleTimeout(this.#options.clock());
      this.#flush();
    });
  }

  /** Looks up a seed name the node asked for, and hands it the answer. */
  async #resolve(name: string, host: string): Promise<void> {
    let ips: string[] | undefined;
    try {
      ips = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      ips = undefined; // the node decides when to try again
    }
    if (!this.#running) return;
    this.#guard(() => {
      const now = this.#options.clock();
      if (ips === undefined) this.node.handleResolveFailed(now, name);
      else this.node.handleResolved(now, name, ips);
      this.#flush();
    });
  }

  #flush(): void {
    for (let r = this.node.pollResolve(); r !== undefined; r = this.node.pollResolve()) {
      void this.#resolve(r.name, r.host);
    }
    for (let t = this.node.pollTransmit(); t !== undefined; t = this.node.pollTransmit()) {
      const to = { hostname: t.to.host, port: t.to.port };
      const sealed = seal(this.#auth, t.bytes, webCryptoMac);
      if (sealed instanceof Promise) {
        const sending: Promise<void> = sealed.then((bytes) => this.#send(bytes, to), () => {
          this.#socketErrors++;
        }).finally(() => this.#signing.delete(sending));
        this.#signing.add(sending);
      } else {
        this.#send(sealed, to);
      }
    }
  }

  #send(bytes: Uint8Array, to: Remote): void {
    this.#socket.send(bytes, to);
    this.#sent++;
    this.#bytesSent += bytes.length;
  }

  /** Runs a step of the node; a throw is a bug, and kills the task rather than the process. */
  #guard(step: () => void): void {
    try {
      step();
    } catch (e) {
      this.#stop();
      // A task dying of a bug owes nobody a goodbye: close at once.
      void this.#socket.close(0).catch(() => {});
      this.#options.onDeath(e);
    }
  }

  #stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
