/**
 * A fleet of rateguard instances on virtual time: membership, allocation
 * and enforcement of every node, an in-memory network with named faults,
 * and traffic offered to one key at a rate per node. Deterministic from one
 * seed. The accuracy table is made from its runs. A face over the
 * simulator's driver ({@link Simulation}, which owns time, the network, the
 * faults, each node's clock and its lives); the fleet starts fleet nodes,
 * signs their gossip and offers them traffic.
 *
 * @module
 */

import type { AuthConfig, Verdict } from "../../core/auth.ts";
import type { FleetNode, FleetStats } from "../../core/fleet_node.ts";
import type { HotKeyView } from "../../core/allocation/allocator.ts";
import type { HashKey } from "../../core/hash.ts";
import type { Limit } from "../../core/limit.ts";
import type { PartitionPolicy } from "../../core/partition.ts";
import { GUARD_BOUNDS } from "../../core/options.ts";
import type { Prng } from "../../core/prng.ts";
import type { LimitBook } from "../../core/rules.ts";
import type { Address } from "../../proto/mod.ts";
import type { MemberChange } from "../../core/membership/mod.ts";
import { FalseDeaths } from "./deaths.ts";
import type { SimOptions } from "../driver/face.ts";
import { decided, Offered, type Served } from "./offered.ts";
import { type FleetWaitOptions, type Lines, linesOn } from "./lines.ts";
import type { Decision } from "../../core/decision.ts";
import { guardNode, type Rejected, Signing } from "./parts.ts";
import { type AddOptions, Simulation } from "./simulation.ts";

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

/** A node's limits and its traffic, of its current life. */
interface Member {
  /** The limits of its current life. */
  book: LimitBook | undefined;
  readonly offered: Offered;
  /** Its callers waiting in `acquire`, of its current life. */
  lines: Lines | undefined;
}

/** How a node added to a running fleet joins and signs ({@link Fleet.add}). */
export interface FleetAddOptions extends AddOptions {
  /**
   * How it signs its gossip.
   *
   * @default {the fleet's `auth`}
   */
  readonly auth?: AuthConfig;
}

/** Nodes of a fleet, the network between them, and their traffic, on virtual time. */
export class Fleet extends Simulation<FleetNode> {
  readonly #members: Member[] = [];
  readonly #signing: Signing;
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
    super(options);
    this.#options = options;
    this.#signing = new Signing(options.auth);
    this.#phases = this.driver.fork();
    this.driver.populate(options.size);
  }

  /** The key every node's traffic goes to: the one to ask {@link Fleet.share} about. */
  get key(): string {
    return KEY;
  }

  /**
   * Adds a node as {@link Simulation.add} does, signing as `auth`.
   *
   * @throws {RangeError} past 60000 nodes.
   *
   * @param options The nodes it joins through, how their names are answered, and how it signs.
   * @returns Its index.
   */
  override add(options: FleetAddOptions = {}): number {
    if (options.auth) this.#signing.set(this.size, options.auth);
    return super.add(options);
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
    const node = this.node(index);
    if (!node) return;
    this.#of(index).book?.setLimit(limit);
    const change = { kind: "defaultLimit", className: "", key: "", value: limit } as const;
    node.shareRule(this.driver.localMs(index), change);
  }

  /**
   * Gives the default class a shadow on every node.
   *
   * @param limit The shadow, or `null` to remove it.
   */
  setShadow(limit: Limit | null): void {
    this.#members.forEach((m, i) => this.node(i) && m.book?.setShadow("", limit));
  }

  /**
   * Takes a step of a signing rollout on node `index`.
   *
   * @param index The node's index.
   * @param auth Its new signing configuration.
   */
  setAuth(index: number, auth: AuthConfig): void {
    this.#of(index);
    this.#signing.set(index, auth);
  }

  /**
   * Datagrams node `index` refused for their signature, by reason.
   *
   * @param index The node's index.
   * @returns Datagrams refused unsigned, and with a bad tag.
   */
  rejected(index: number): Rejected {
    this.#of(index);
    return this.#signing.rejected(index);
  }

  /** Hears every datagram sent, after signing, and where it goes: for captures to mutate. */
  onSend: ((from: number, bytes: Uint8Array, to: Address) => void) | undefined;

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
    return this.running(index).share("", key);
  }

  /**
   * Checks one request of `key` on node `index` now, beside the offered traffic.
   *
   * @param index The node's index.
   * @param key The key.
   * @returns Whether it was admitted; `undefined` if the node is down.
   */
  check(index: number, key: string): boolean | undefined {
    const node = this.node(index);
    if (!node) return undefined;
    const allowed = node.check("", key, 1, this.driver.localMs(index)).allowed;
    this.driver.flush(index);
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
    const lines = this.node(index) && this.#of(index).lines;
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
    return this.node(index)?.hotKeys();
  }

  /**
   * Node `index`'s stats, if it runs.
   *
   * @param index The node's index.
   * @returns Its stats, or `undefined` when it does not run.
   */
  stats(index: number): FleetStats | undefined {
    return this.node(index)?.stats(this.driver.localMs(index));
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
   * Signed as node `index` signs, then heard by `onSend`.
   *
   * @internal For the face, not its callers.
   */
  protected override seal(index: number, bytes: Uint8Array, to: Address): Uint8Array {
    const sealed = this.#signing.seal(index, bytes);
    this.onSend?.(index, sealed, to);
    return sealed;
  }

  /**
   * Node `index`'s signature check, counted when it refuses.
   *
   * @internal For the face, not its callers.
   */
  protected override open(index: number, bytes: Uint8Array): Verdict {
    return this.#signing.open(index, bytes);
  }

  /**
   * The requests node `index` was offered during its pause are served now.
   *
   * @internal For the face, not its callers.
   */
  protected override resumed(index: number): void {
    this.#members[index].offered.drain();
  }

  /**
   * A fleet node with its limits and its wait lines, as a guard has them.
   *
   * @internal For the face, not its callers.
   */
  protected override startNode(
    index: number,
    address: Address,
    seeds: string[],
    seed: number,
  ): FleetNode {
    const options = this.#options;
    const member = this.#members[index] ??= this.#member(index);
    this.#indexOf.set(address.toString(), index);
    const { node, book, enforcer } = guardNode({
      limit: options.limit,
      hashKey: options.hashKey,
      address,
      seeds,
      policy: options.policy,
      relay: options.relay,
      sharedBurst: options.sharedBurst,
      fleetRules: options.fleetRules,
      memberChanged: (change) => this.#falseDeaths.record(index, change, (c) => this.#runs(c)),
      membership: {
        seed,
        protocolPeriodMs: options.protocolPeriodMs ?? GUARD_BOUNDS.protocolPeriodMs.default,
      },
    });
    member.book = book;
    member.lines = linesOn(this.driver, index, node, enforcer);
    return node;
  }

  /** Whether the member `change` is about runs, in the life it names. */
  #runs(change: MemberChange): boolean {
    const index = this.#indexOf.get(change.member.address.toString());
    const node = index === undefined ? undefined : this.node(index);
    return node !== undefined && (change.member.life ?? node.life) === node.life;
  }

  /** Node `index`'s record; a `RangeError` for a node that was never added. */
  #of(index: number): Member {
    this.node(index);
    return this.#members[index];
  }

  /** One request of the offered traffic reaches node `index`. */
  #serve(index: number): Served {
    const node = this.node(index);
    if (!node) return "down";
    if (this.driver.isPaused(index)) return "paused";
    const { decision, shadow } = node.checkTraced("", KEY, 1, this.driver.localMs(index));
    this.driver.flush(index);
    return decided(decision.allowed, shadow !== undefined && !shadow.allowed);
  }

  /** Node `index` before it first starts. */
  #member(index: number): Member {
    return {
      book: undefined,
      lines: undefined,
      offered: new Offered((atMs, run) => this.at(atMs, run), () => this.#serve(index)),
    };
  }
}
