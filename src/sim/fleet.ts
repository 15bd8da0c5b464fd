/**
 * A fleet of rateguard instances on virtual time: membership, allocation
 * and enforcement of every node, an in-memory network with named faults,
 * and traffic offered to one key at a rate per node. Deterministic from one
 * seed. The accuracy table is made from its runs.
 *
 * @module
 */

import { type AuthConfig, authConfig, judge, seal, type Verdict } from "../core/auth.ts";
import { Enforcer } from "../core/enforcer.ts";
import { syncMac } from "./hmac.ts";
import { FleetNode, type FleetStats } from "../core/fleet_node.ts";
import { type HashKey, PUBLIC_HASH_KEY } from "../core/hash.ts";
import type { Limit } from "../core/limit.ts";
import { PartitionPolicy } from "../core/partition.ts";
import { Prng } from "../core/prng.ts";
import { LimitBook } from "../core/rules.ts";
import { Address } from "../proto/mod.ts";
import { EventHeap } from "./heap.ts";
import { answer, type SeedLookup, seedName } from "./names.ts";
import { deliveryDelays, type NetworkFaults, Topology } from "./network.ts";

/** How a fleet is set up. */
export interface FleetOptions {
  /** Decides the whole run. */
  readonly seed: number;
  /**
   * Nodes started at time 0; node 0 joins through node 1, the others through
   * node 0, each by its seed name (see `seedLookup`).
   */
  readonly size: number;
  /** The key's limit across the fleet. */
  readonly limit: Limit;
  /** The partition policy of every node (default: hold down for 10 s). */
  readonly policy?: PartitionPolicy;
  /** The protocol period (200 ms). */
  readonly protocolPeriodMs?: number;
  /** Network faults from the start. */
  readonly faults?: NetworkFaults;
  /** Whether nodes relay each other's demand reports (default true). */
  readonly relay?: boolean;
  /** How every node signs its gossip (default: off). */
  readonly auth?: AuthConfig;
  /**
   * The key of every node's key hashes (default: the public one). For a
   * fleet salted as guards are, `await saltHashKey(salt)` of the main entry.
   */
  readonly hashKey?: HashKey;
  /** How every node's lookups of its seed name are answered (default: at once, with the address). */
  readonly seedLookup?: SeedLookup;
}

/** The key every node's traffic goes to. */
export const KEY = "api:tenant-42";

interface Member {
  readonly index: number;
  readonly address: Address;
  node: FleetNode | undefined;
  book: LimitBook | undefined;
  /** Requests a second this node is offered. */
  demand: number;
  nextRequestMs: number;
  pausedUntilMs: number;
  /** Requests that arrived during a pause, checked when it ends. */
  queued: number;
  admitted: number;
  denied: number;
  shadowDenied: number;
  auth: AuthConfig;
  rejected: { unsigned: number; badTag: number };
  seedLookup: SeedLookup;
}

type Delivery = { atMs: number; to: number; from: Address; bytes: Uint8Array };
type Answer = {
  atMs: number;
  to: number;
  node: FleetNode;
  name: string;
  ips: string[] | undefined;
};

/** Nodes of a fleet, the network between them, and their traffic, on virtual time. */
export class Fleet {
  readonly #members: Member[] = [];
  readonly #byAddress = new Map<string, number>();
  readonly #deliveries = new EventHeap<Delivery>();
  readonly #answers = new EventHeap<Answer>();
  readonly #netPrng: Prng;
  readonly #prng: Prng;
  readonly #options: FleetOptions;
  readonly topology: Topology = new Topology();
  faults: NetworkFaults;
  #nowMs = 0;
  #limit: Limit;

  /** A fleet of `size` nodes, all started at time 0. */
  constructor(options: FleetOptions) {
    this.#options = options;
    this.#prng = new Prng(options.seed);
    this.#netPrng = this.#prng.fork();
    this.faults = options.faults ?? {};
    this.#limit = options.limit;
    for (let i = 0; i < options.size; i++) this.add();
  }

  /** Virtual time, ms. */
  get nowMs(): number {
    return this.#nowMs;
  }

  /** How many nodes were ever added. */
  get size(): number {
    return this.#members.length;
  }

  /**
   * Adds a node (started now), signing as `auth` and looking its seed up as
   * `seedLookup` (defaults: the fleet's), and returns its index.
   */
  add(options: { auth?: AuthConfig; seedLookup?: SeedLookup } = {}): number {
    const index = this.#members.length;
    const address = addressOf(index);
    const member: Member = {
      index,
      address,
      node: undefined,
      book: undefined,
      demand: 0,
      nextRequestMs: 0,
      pausedUntilMs: 0,
      queued: 0,
      admitted: 0,
      denied: 0,
      shadowDenied: 0,
      auth: options.auth ?? this.#options.auth ?? authConfig("off"),
      rejected: { unsigned: 0, badTag: 0 },
      seedLookup: options.seedLookup ?? this.#options.seedLookup ?? {},
    };
    this.#members.push(member);
    this.#byAddress.set(address.toString(), index);
    this.#start(member);
    return index;
  }

  /** Offers `perSec` requests a second to node `index`, evenly spaced. */
  setDemand(index: number, perSec: number): void {
    const m = this.#members[index];
    m.demand = perSec;
    // A phase of its own per node, so the nodes' requests do not line up.
    m.nextRequestMs = this.#nowMs + (perSec > 0 ? this.#prng.nextFloat() * (1_000 / perSec) : 0);
  }

  /** Sets the key's limit on node `index` only (a live change, rolled out one node at a time). */
  setLimit(index: number, limit: Limit): void {
    this.#members[index].book?.setLimit(limit);
  }

  /** Gives the default class a shadow on every node. */
  setShadow(limit: Limit | null): void {
    for (const m of this.#members) m.book?.setShadow("", limit);
  }

  /** Takes a step of a signing rollout on node `index`. */
  setAuth(index: number, auth: AuthConfig): void {
    this.#members[index].auth = auth;
  }

  /** Datagrams node `index` refused for their signature, by reason. */
  rejected(index: number): { unsigned: number; badTag: number } {
    return { ...this.#members[index].rejected };
  }

  /**
   * Hands node `index` a datagram as if `from` had sent it: through its
   * signature check, then to its node. Returns what became of it.
   */
  inject(
    index: number,
    from: Address,
    bytes: Uint8Array,
  ): "accepted" | "unsigned" | "badTag" | "down" {
    const m = this.#members[index];
    if (!m.node) return "down";
    const verdict = judge(m.auth, bytes, syncMac) as Verdict;
    if (!verdict.accept) {
      m.rejected[verdict.reason]++;
      return verdict.reason;
    }
    m.node.handleDatagram(this.#nowMs, from, verdict.bytes);
    this.#flush(m);
    return "accepted";
  }

  /** Hears every datagram sent, after signing, and where it goes: for captures to mutate. */
  onSend: ((from: number, bytes: Uint8Array, to: Address) => void) | undefined;

  /** Stops node `index` from processing anything until `untilMs`; its requests queue meanwhile. */
  pause(index: number, untilMs: number): void {
    this.#members[index].pausedUntilMs = untilMs;
  }

  /** Kills node `index` at once: no goodbye, state lost. */
  crash(index: number): void {
    this.#members[index].node = undefined;
    this.#members[index].book = undefined;
  }

  /** Starts node `index` again at the same address with fresh state. */
  restart(index: number): void {
    this.#start(this.#members[index]);
  }

  /** Node `index` leaves gracefully and stops. */
  leave(index: number): void {
    const m = this.#members[index];
    if (!m.node) return;
    m.node.leave();
    this.#flush(m);
    m.node = undefined;
    m.book = undefined;
  }

  /** The rate node `index` admits `key` at now, per second. */
  share(index: number, key: string): number {
    return this.#members[index].node!.share("", key);
  }

  /** Checks one request of `key` on node `index` now, beside the offered traffic; undefined if it is down. */
  check(index: number, key: string): boolean | undefined {
    return this.#members[index].node?.check("", key, 1, this.#nowMs).allowed;
  }

  /** Node `index`'s stats, if it runs. */
  stats(index: number): FleetStats | undefined {
    return this.#members[index].node?.stats(this.#nowMs);
  }

  /** The admitted, denied and shadow-denied counts of node `index` since the last call, reset. */
  take(index: number): { admitted: number; denied: number; shadowDenied: number } {
    const m = this.#members[index];
    const out = { admitted: m.admitted, denied: m.denied, shadowDenied: m.shadowDenied };
    m.admitted = m.denied = m.shadowDenied = 0;
    return out;
  }

  /** Runs the fleet until `untilMs`, a millisecond at a time. */
  runUntil(untilMs: number): void {
    while (this.#nowMs < untilMs) {
      const now = this.#nowMs;
      for (let d = this.#deliveries.popDue(now); d; d = this.#deliveries.popDue(now)) {
        const m = this.#members[d.to];
        if (m.node && m.pausedUntilMs <= now) this.inject(d.to, d.from, d.bytes);
      }
      for (let a = this.#answers.popDue(now); a; a = this.#answers.popDue(now)) {
        const m = this.#members[a.to];
        if (m.node !== a.node) continue; // asked by an earlier life
        if (a.ips === undefined) a.node.handleResolveFailed(now, a.name);
        else a.node.handleResolved(now, a.name, a.ips);
        this.#flush(m);
      }
      for (const m of this.#members) this.#step(m, now);
      this.#nowMs = now + 1;
    }
  }

  #step(m: Member, now: number): void {
    const node = m.node;
    if (!node) return;
    if (m.pausedUntilMs > now) {
      // Paused: requests arrive and wait; nothing is processed.
      while (m.demand > 0 && m.nextRequestMs <= now) {
        m.queued++;
        m.nextRequestMs += 1_000 / m.demand;
      }
      return;
    }
    if ((node.pollTimeout() ?? Infinity) <= now) node.handleTimeout(now);
    for (; m.queued > 0; m.queued--) this.#check(m, node, now);
    while (m.demand > 0 && m.nextRequestMs <= now) {
      this.#check(m, node, now);
      m.nextRequestMs += 1_000 / m.demand;
    }
    this.#flush(m);
  }

  #check(m: Member, node: FleetNode, now: number): void {
    const { decision, shadow } = node.checkTraced("", KEY, 1, now);
    if (decision.allowed) m.admitted++;
    else m.denied++;
    if (shadow !== undefined && !shadow.allowed) m.shadowDenied++;
  }

  #flush(m: Member): void {
    const node = m.node!;
    for (let r = node.pollResolve(); r !== undefined; r = node.pollResolve()) {
      const { atMs, ips } = answer(m.seedLookup, this.#nowMs, r.host, addressOf);
      this.#answers.push({ atMs, to: m.index, node, name: r.name, ips });
    }
    for (let t = node.pollTransmit(); t !== undefined; t = node.pollTransmit()) {
      const to = this.#byAddress.get(t.to.toString());
      const bytes = seal(m.auth, t.bytes, syncMac) as Uint8Array;
      this.onSend?.(m.index, bytes, t.to);
      if (to === undefined || !this.topology.connected(m.index, to)) continue;
      for (const delayMs of deliveryDelays(this.faults, this.#netPrng)) {
        this.#deliveries.push({
          atMs: this.#nowMs + Math.max(1, Math.round(delayMs)),
          to,
          from: m.address,
          bytes,
        });
      }
    }
  }

  #start(m: Member): void {
    const book = new LimitBook(this.#limit, { maxClasses: 64, maxKeyLimits: 4_096 });
    const enforcer = new Enforcer(book, {
      capacity: 8_192,
      overflowScale: 0.5,
      fleet: { hashKey: this.#options.hashKey ?? PUBLIC_HASH_KEY },
    });
    const seed = m.index === 0 ? 1 : 0;
    const node = new FleetNode({
      address: m.address,
      seeds: seed < Math.max(this.#options.size, this.#members.length) ? [seedName(seed)] : [],
      book,
      enforcer,
      policy: this.#options.policy ?? PartitionPolicy.holdDown(),
      hotKeys: 64,
      relay: this.#options.relay,
      membership: {
        seed: this.#prng.nextU32(),
        protocolPeriodMs: this.#options.protocolPeriodMs ?? 200,
      },
    });
    m.node = node;
    m.book = book;
  }
}

/** The address of node `index`: 10.0.x.y:7946. */
export function addressOf(index: number): Address {
  return Address.parse(`10.0.${index >> 8}.${(index & 255) + 1}:7946`);
}
