/**
 * A fleet of rateguard instances on virtual time: membership, allocation
 * and enforcement of every node, an in-memory network with named faults,
 * and traffic offered to one key at a rate per node. Deterministic from one
 * seed. The accuracy table is made from its runs. A layer over the
 * simulator's driver, which owns time, the network, the faults and each
 * node's clock; the fleet starts fleet nodes, signs their gossip and offers
 * them traffic.
 *
 * @module
 */

import { type AuthConfig, authConfig, judge, seal, type Verdict } from "../../core/auth.ts";
import { Enforcer } from "../../core/enforcer.ts";
import { syncMac } from "./hmac.ts";
import { FleetNode, type FleetStats } from "../../core/fleet_node.ts";
import type { HotKeyView } from "../../core/allocation/allocator.ts";
import { type HashKey, PUBLIC_HASH_KEY } from "../../core/hash.ts";
import type { Limit } from "../../core/limit.ts";
import type { PartitionPolicy } from "../../core/partition.ts";
import { COLD_FRACTION, DEFAULT_PARTITION_POLICY, GUARD_BOUNDS } from "../../core/options.ts";
import type { Prng } from "../../core/prng.ts";
import { LimitBook } from "../../core/rules.ts";
import type { Address } from "../../proto/mod.ts";
import type { MemberChange } from "../../core/membership/mod.ts";
import { Driver } from "../driver/driver.ts";
import { FalseDeaths } from "./deaths.ts";
import type { SimOptions } from "../driver/face.ts";
import { Offered, type Served } from "./offered.ts";
import { type FleetWaitOptions, Lines } from "./lines.ts";
import type { Decision } from "../../core/decision.ts";
import type { SeedLookup } from "../driver/names.ts";
import type { NetworkFaults, Topology } from "../driver/network.ts";

export { addressOf } from "../driver/names.ts";

/** How a fleet is set up. */
export interface FleetOptions extends SimOptions {
  /**
   * Nodes started at time 0; node 0 joins through node 1, the others through
   * node 0, each by its seed name (see `seedLookup`).
   */
  readonly size: number;
  /** The key's limit across the fleet. */
  readonly limit: Limit;
  /**
   * The partition policy of every node.
   *
   * @default {DEFAULT_PARTITION_POLICY: hold down for 10 s}
   */
  readonly policy?: PartitionPolicy;
  /**
   * The protocol period (the guard's default, 200 ms).
   *
   * @default {200 (GUARD_BOUNDS.protocolPeriodMs)}
   */
  readonly protocolPeriodMs?: number;
  /**
   * Whether nodes relay each other's demand reports.
   *
   * @default {true}
   */
  readonly relay?: boolean;
  /**
   * Whether every node's bursts follow its shares (`sharedBurst`); unset,
   * as the fleet's size says, as a guard's default.
   *
   * @default {undefined}
   */
  readonly sharedBurst?: boolean;
  /**
   * How every node signs its gossip.
   *
   * @default {off}
   */
  readonly auth?: AuthConfig;
  /**
   * The key of every node's key hashes. For a fleet salted as guards are,
   * `await saltHashKey(salt)` of the main entry.
   *
   * @default {PUBLIC_HASH_KEY}
   */
  readonly hashKey?: HashKey;
  /**
   * Whether the nodes share rules (`fleetRules`): then {@link Fleet.setLimit}
   * on one node is a change every node takes.
   *
   * @default {false}
   */
  readonly fleetRules?: boolean;
}

/** The key every node's traffic goes to. */
export const KEY = "api:tenant-42";

/** A node's signing, what it refused, its limits, and its traffic. */
interface Member {
  auth: AuthConfig;
  readonly rejected: { unsigned: number; badTag: number };
  /** The limits of its current life. */
  book: LimitBook | undefined;
  readonly offered: Offered;
  /** Its callers waiting in `acquire`, of its current life. */
  lines: Lines | undefined;
}

/** Nodes of a fleet, the network between them, and their traffic, on virtual time. */
export class Fleet {
  readonly #driver: Driver<FleetNode>;
  readonly #members: Member[] = [];
  /** The requests' phases: a stream of their own, so that they do not move the nodes' seeds. */
  readonly #phases: Prng;
  readonly #options: FleetOptions;
  /** Every node's index by its address, as text. */
  readonly #indexOf = new Map<string, number>();
  readonly #falseDeaths = new FalseDeaths();

  /**
   * A fleet of `size` nodes, all started at time 0.
   *
   * @throws {RangeError} if `size` or `clockDrift` is out of range.
   *
   * @param options The seed, the size, the limit, the policy and the faults.
   */
  constructor(options: FleetOptions) {
    this.#options = options;
    this.#driver = new Driver<FleetNode>(options, {
      start: (index, address, seeds, seed) => this.#start(index, address, seeds, seed),
      send: (index, bytes, to) => {
        const sealed = seal(this.#members[index].auth, bytes, syncMac) as Uint8Array;
        this.onSend?.(index, sealed, to);
        return sealed;
      },
      receive: (index, _from, bytes) => {
        const verdict = this.#open(index, bytes);
        return verdict.accept ? verdict.bytes : undefined;
      },
      resumed: (index) => this.#members[index].offered.drain(),
    });
    this.#phases = this.#driver.fork();
    this.#driver.populate(options.size);
  }

  /** Virtual time, ms. */
  get nowMs(): number {
    return this.#driver.nowMs;
  }

  /** The key every node's traffic goes to: the one to ask {@link Fleet.share} about. */
  get key(): string {
    return KEY;
  }

  /** How many nodes were ever added. */
  get size(): number {
    return this.#driver.size;
  }

  /** Which node reaches which: cut and heal links here. */
  get topology(): Topology {
    return this.#driver.topology;
  }

  /** The network's faults now; change them at any time. */
  get faults(): NetworkFaults {
    return this.#driver.faults;
  }

  set faults(faults: NetworkFaults) {
    this.#driver.faults = faults;
  }

  /**
   * Adds a node (started now, joining through node 0), signing as `auth`
   * and looking its seed up as `seedLookup` (defaults: the fleet's), and
   * returns its index.
   *
   * @param options `auth`: how it signs; `seedLookup`: how its seed's name is answered.
   * @returns Its index.
   */
  add(options: { auth?: AuthConfig; seedLookup?: SeedLookup } = {}): number {
    this.#members[this.size] = this.#member(this.size, options.auth);
    return this.#driver.add({ seedLookup: options.seedLookup });
  }

  /**
   * Offers `perSec` requests a second to node `index`, evenly spaced.
   *
   * @param index The node's index.
   * @param perSec Requests a second, 0 for none.
   */
  setDemand(index: number, perSec: number): void {
    const phase = perSec > 0 ? this.#phases.nextFloat() : 0;
    this.#of(index).offered.set(perSec, this.nowMs, phase);
  }

  /**
   * Sets the key's limit on node `index` (a live change, rolled out one node
   * at a time), which with `fleetRules` goes on to every node.
   *
   * @param index The node's index.
   * @param limit The new limit.
   */
  setLimit(index: number, limit: Limit): void {
    const node = this.#driver.node(index);
    if (!node) return;
    this.#of(index).book?.setLimit(limit);
    const change = { kind: "defaultLimit", className: "", key: "", value: limit } as const;
    node.shareRule(this.#driver.localMs(index), change);
  }

  /**
   * Gives the default class a shadow on every node.
   *
   * @param limit The shadow, or `null` to remove it.
   */
  setShadow(limit: Limit | null): void {
    this.#members.forEach((m, i) => this.#driver.node(i) && m.book?.setShadow("", limit));
  }

  /**
   * Takes a step of a signing rollout on node `index`.
   *
   * @param index The node's index.
   * @param auth Its new signing configuration.
   */
  setAuth(index: number, auth: AuthConfig): void {
    this.#of(index).auth = auth;
  }

  /**
   * Datagrams node `index` refused for their signature, by reason.
   *
   * @param index The node's index.
   * @returns Datagrams refused unsigned, and with a bad tag.
   */
  rejected(index: number): { unsigned: number; badTag: number } {
    return { ...this.#of(index).rejected };
  }

  /**
   * Hands node `index` a datagram as if `from` had sent it, now: through
   * its signature check, then to its node (when its pause ends, if it is
   * paused). Returns what became of it.
   *
   * @param index The receiving node's index.
   * @param from The source address it sees.
   * @param bytes The datagram, any bytes.
   * @returns What the node made of it.
   */
  inject(
    index: number,
    from: Address,
    bytes: Uint8Array,
  ): "accepted" | "unsigned" | "badTag" | "down" {
    if (!this.#driver.node(index)) return "down";
    const verdict = this.#open(index, bytes);
    if (!verdict.accept) return verdict.reason;
    this.#driver.hand(index, from, verdict.bytes);
    return "accepted";
  }

  /** Hears every datagram sent, after signing, and where it goes: for captures to mutate. */
  onSend: ((from: number, bytes: Uint8Array, to: Address) => void) | undefined;

  /**
   * Stops node `index` from processing anything until `untilMs`: what it
   * hears and the requests it is offered queue meanwhile.
   *
   * @param index The node's index.
   * @param untilMs The virtual time it resumes at, ms.
   */
  pause(index: number, untilMs: number): void {
    this.#driver.pause(index, untilMs - this.nowMs);
  }

  /**
   * Kills node `index` at once: no goodbye, state lost.
   *
   * @param index The node's index.
   */
  crash(index: number): void {
    this.#driver.crash(index);
  }

  /**
   * Starts node `index` again at the same address with fresh state.
   *
   * @throws {RangeError} if node `index` runs.
   *
   * @param index The node's index.
   */
  restart(index: number): void {
    this.#driver.restart(index);
  }

  /**
   * Node `index` leaves gracefully and stops.
   *
   * @param index The node's index.
   */
  leave(index: number): void {
    this.#driver.leave(index);
  }

  /**
   * The rate node `index` admits `key` at now, per second.
   *
   * @throws {RangeError} if node `index` does not run.
   *
   * @param index The node's index.
   * @param key The key; the fleet's traffic goes to {@link Fleet.key}.
   * @returns Requests a second.
   */
  share(index: number, key: string): number {
    const node = this.#driver.node(index);
    if (!node) throw new RangeError(`node ${index} does not run`);
    return node.share("", key);
  }

  /**
   * Checks one request of `key` on node `index` now, beside the offered traffic.
   *
   * @param index The node's index.
   * @param key The key.
   * @returns Whether it was admitted; `undefined` if the node is down.
   */
  check(index: number, key: string): boolean | undefined {
    const node = this.#driver.node(index);
    if (!node) return undefined;
    const allowed = node.check("", key, 1, this.#driver.localMs(index)).allowed;
    this.#driver.flush(index);
    return allowed;
  }

  /**
   * A caller of node `index` waits until a request of `key` is admitted, as
   * `guard.acquire` waits: in the key's line, in arrival order, one check
   * at its admission, counted once if it times out. The line keeps one
   * timer on virtual time; a crash forgets its callers unanswered.
   *
   * @throws {RangeError} if node `index` does not run.
   *
   * @param index The node's index.
   * @param key The key.
   * @param options The longest wait, the cost, and who is told what ended the wait.
   * @returns The decision when answered at once; undefined when it waits.
   */
  acquire(index: number, key: string, options: FleetWaitOptions): Decision | undefined {
    const lines = this.#driver.node(index) && this.#of(index).lines;
    if (!lines) throw new RangeError(`node ${index} does not run`);
    return lines.acquire(key, options);
  }

  /**
   * How node `index` sees its hot keys split among the members, if it runs.
   *
   * @param index The node's index.
   * @returns One view per hot key, or `undefined` when the node does not run.
   */
  hotKeys(index: number): HotKeyView[] | undefined {
    return this.#driver.node(index)?.hotKeys();
  }

  /**
   * Node `index`'s stats, if it runs.
   *
   * @param index The node's index.
   * @returns Its stats, or `undefined` when it does not run.
   */
  stats(index: number): FleetStats | undefined {
    return this.#driver.node(index)?.stats(this.#driver.localMs(index));
  }

  /**
   * The admitted, denied and shadow-denied counts of node `index` since the last call, reset.
   *
   * @param index The node's index.
   * @returns The counts.
   */
  take(index: number): { admitted: number; denied: number; shadowDenied: number } {
    return this.#of(index).offered.take();
  }

  /**
   * (Observer, member) pairs that saw a running member declared dead since
   * the fleet started (a paused member runs), each pair counted once: a
   * crashed or departed member's death, or an earlier life's, is no false one.
   *
   * @returns The pairs.
   */
  falseDeaths(): number {
    return this.#falseDeaths.count;
  }

  /**
   * Runs the fleet until `untilMs`: everything due by then happens.
   *
   * @param untilMs The virtual time to stop at, ms.
   */
  runUntil(untilMs: number): void {
    this.#driver.runUntil(untilMs);
  }

  /** Whether the member `change` is about runs, in the life it names. */
  #runs(change: MemberChange): boolean {
    const index = this.#indexOf.get(change.member.address.toString());
    const node = index === undefined ? undefined : this.#driver.node(index);
    return node !== undefined && (change.member.life ?? node.life) === node.life;
  }

  /** Node `index`'s record; a `RangeError` for a node that was never added. */
  #of(index: number): Member {
    this.#driver.node(index);
    return this.#members[index];
  }

  /** One request of the offered traffic reaches node `index`. */
  #serve(index: number): Served {
    const node = this.#driver.node(index);
    if (!node) return "down";
    if (this.#driver.isPaused(index)) return "paused";
    const { decision, shadow } = node.checkTraced("", KEY, 1, this.#driver.localMs(index));
    this.#driver.flush(index);
    return { allowed: decision.allowed, shadowDenied: shadow !== undefined && !shadow.allowed };
  }

  /** Node `index`'s signature check of a datagram, counted when it refuses. */
  #open(index: number, bytes: Uint8Array): Verdict {
    const m = this.#members[index];
    const verdict = judge(m.auth, bytes, syncMac) as Verdict;
    if (!verdict.accept) m.rejected[verdict.reason]++;
    return verdict;
  }

  /** Node `index` before it first starts, signing as `auth` (default: the fleet's). */
  #member(index: number, auth?: AuthConfig): Member {
    return {
      auth: auth ?? this.#options.auth ?? authConfig("off"),
      rejected: { unsigned: 0, badTag: 0 },
      book: undefined,
      lines: undefined,
      offered: new Offered((atMs, run) => this.#driver.at(atMs, run), () => this.#serve(index)),
    };
  }

  #start(index: number, address: Address, seeds: string[], seed: number): FleetNode {
    const options = this.#options;
    this.#members[index] ??= this.#member(index);
    this.#indexOf.set(address.toString(), index);
    const book = new LimitBook(options.limit, {
      maxClasses: GUARD_BOUNDS.maxClasses.default,
      maxKeyLimits: GUARD_BOUNDS.maxKeyLimits.default,
    });
    const enforcer = new Enforcer(book, {
      capacity: 2 * GUARD_BOUNDS.trackedKeys.default,
      overflowScale: COLD_FRACTION,
      fleet: { hashKey: options.hashKey ?? PUBLIC_HASH_KEY },
    });
    this.#members[index].book = book;
    const node: FleetNode = new FleetNode({
      address,
      seeds,
      book,
      enforcer,
      policy: options.policy ?? DEFAULT_PARTITION_POLICY,
      relay: options.relay,
      sharedBurst: options.sharedBurst,
      fleetRules: options.fleetRules,
      memberChanged: (change) => this.#falseDeaths.record(index, change, (c) => this.#runs(c)),
      membership: {
        seed,
        protocolPeriodMs: options.protocolPeriodMs ?? GUARD_BOUNDS.protocolPeriodMs.default,
      },
    });
    const driver = this.#driver;
    this.#members[index].lines = new Lines({
      at: (atMs, run) => driver.at(atMs, run),
      nowMs: () => driver.nowMs,
      localMs: () => driver.localMs(index),
      gate: (key) => enforcer.lineGate("", key),
      awake: () =>
        driver.node(index) !== node ? "gone" : driver.isPaused(index) ? "paused" : "awake",
      flush: () => driver.flush(index),
    });
    return node;
  }
}
