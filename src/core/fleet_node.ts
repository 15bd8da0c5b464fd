/**
 * One instance of a fleet, sans I/O: membership, allocation and enforcement
 * behind the same face as a membership node (datagrams and timeouts in,
 * datagrams out), plus the request path. The runtime puts sockets and a
 * clock under it; the simulator, an in-memory network and virtual time.
 *
 * This file is the node's face: each member passes to the part that does
 * the work. What a node is made of is `fleet_options.ts`'s; how its parts
 * are made and share membership's extension, `fleet_parts.ts`'s.
 *
 * Why this file is over 400 lines: it is one class, the face of one state
 * machine, whose 29 public members (its I/O and timers, the request path,
 * rule sharing, observation) each pass to a part in a few lines, under the
 * JSDoc `deno doc --lint` asks of every public member; what they pass to
 * lives in the parts.
 *
 * @module
 */

import type { AllocationStats, Allocator, HotKeyView } from "./allocation/allocator.ts";
import type { BatchDecision, BatchItem, Enforcer, EnforcerStats, Traced } from "./enforcer.ts";
import type { Decision } from "./decision.ts";
import type {
  MemberInfo,
  MembershipStats,
  Node,
  ResolveRequest,
  Transmit,
} from "./membership/mod.ts";
import type { Address } from "../proto/mod.ts";
import { RateguardError } from "./errors.ts";
import type { FleetNodeOptions } from "./fleet_options.ts";
import { fleetParts } from "./fleet_parts.ts";
import {
  type FleetRulesStats,
  NO_RULES,
  type RuleEntry,
  type RulesSync,
} from "./rules_sync/mod.ts";

/**
 * What a fleet node decided and how it sees the fleet: the enforcer's,
 * the allocator's and the membership's figures side by side, and its rules
 * beside them, under the names `guard.stats()` shows them by.
 */
export interface FleetStats extends EnforcerStats, AllocationStats, MembershipStats {
  /** The fleet's rules as this node holds them: `shared` false, and every figure 0, when it shares none. */
  readonly rules: FleetRulesStats;
}

/** What {@link FleetNode.heardReports} shows of one demand report held. */
export interface HeldReport {
  /** Which life of the origin made it. */
  readonly life: number;
  /** Its round in that life: the origin makes one a protocol period. */
  readonly round: number;
  /** Its age when it came, ms. */
  readonly ageMs: number;
  /** When it came, in the node's time, ms. */
  readonly receivedMs: number;
}

/** A change of one rule, as {@link FleetNode.shareRule} takes it. */
export type RuleChange = Omit<RuleEntry, "version">;

/** See the module doc. */
export class FleetNode {
  readonly #node: Node;
  readonly #allocator: Allocator;
  readonly #enforcer: Enforcer;
  readonly #tickMs: number;
  readonly #maxMembers: number;
  readonly #rules: RulesSync | undefined;
  #nextTickMs = 0;
  #lastNowMs = 0;
  /** Peers' changes the book refused (its bounds). */
  #refusedRules = 0;

  /**
   * A node that has not yet joined anyone: drive it, and do the lookups of
   * seed names it asks for ({@link FleetNode.pollResolve}).
   *
   * @param options Its address, seeds, limits, enforcer, partition policy and tunables.
   * @throws {TypeError} if a seed is not `ip:port` or `host:port`.
   * @throws {RangeError} when a membership tunable is out of its range.
   * @throws {TypeError} when `membership.seed` is missing or not an integer.
   */
  constructor(options: FleetNodeOptions) {
    const parts = fleetParts(options, () => this.#refusedRules++);
    this.#enforcer = options.enforcer;
    this.#node = parts.node;
    this.#allocator = parts.allocator;
    this.#rules = parts.rules;
    this.#tickMs = parts.tickMs;
    this.#maxMembers = parts.maxMembers;
  }

  /** Whether rule changes are shared with the fleet. */
  get sharesRules(): boolean {
    return this.#rules !== undefined;
  }

  /**
   * Refuses a change to be made here that the fleet's table has no room
   * for: call it before making the change, so that nothing is half made
   * (here and not shared). Nothing when fleet rules are off.
   *
   * @param change The rule.
   * @throws {RateguardError} `RulesFull` when the table is full and holds
   *   no removal to give up (`stats().rules.tableFullReason` says more).
   *
   * @internal For the guard's rules (`guard_rules.ts`).
   */
  admitRule(change: Pick<RuleChange, "kind" | "className" | "key">): void {
    this.admitRules([change]);
  }

  /**
   * {@link FleetNode.admitRule} for many changes at once (a bulk change):
   * refused unless the table has room for every new rule among them.
   *
   * @param changes The rules.
   * @throws {RateguardError} `RulesFull` when it has not.
   *
   * @internal For the guard's rules (`guard_rules.ts`).
   */
  admitRules(changes: Iterable<Pick<RuleChange, "kind" | "className" | "key">>): void {
    const reason = this.#rules?.roomFor(changes) ?? "";
    if (reason !== "") throw new RateguardError("RulesFull", reason);
  }

  /**
   * Why this node's fleet rules table is full, `""` when it is not (or
   * rules are not shared): without computing the other figures.
   *
   * @returns The reason, with the table's counts, or `""`.
   */
  rulesTableFull(): string {
    return this.#rules?.fullReason() ?? "";
  }

  /**
   * Shares a change already made to this node's book (or dry run) with the
   * fleet (after {@link FleetNode.admitRule}). Nothing when fleet rules are off.
   *
   * @param nowMs The time, ms.
   * @param change The rule, and what it now says (`value` undefined: removed).
   * @returns Whether it goes to the fleet: false when fleet rules are off,
   *   or the rule is too large to share (counted in `rules.unshared`).
   *
   * @internal For the guard's rules (`guard_rules.ts`).
   */
  shareRule(nowMs: number, change: RuleChange): boolean {
    return this.#rules?.local(nowMs, change) !== undefined;
  }

  /**
   * Blocks `key` for `ms` here (`Enforcer.block`) and, with fleet rules,
   * on every member: the fleet's block ends at the same instant everywhere.
   *
   * @param className The key's class (`""`: the default class).
   * @param key The key, a non-empty string.
   * @param ms How long, above 0 and at most a year.
   * @param nowMs The time, ms.
   * @returns Whether it is blocked here: always true (a full block set makes room).
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when `ms` is out of range.
   * @throws {RateguardError} `RulesFull` when the fleet's table has no room for it (nothing blocked).
   */
  block(className: string, key: string, ms: number, nowMs: number): boolean {
    this.admitRule({ kind: "block", className, key });
    const blocked = this.#enforcer.block(className, key, ms, nowMs);
    this.#rules?.block(nowMs, className, key, ms);
    return blocked;
  }

  /**
   * Forgets what `key` owes here (`Enforcer.reset`), a block included;
   * with fleet rules, the fleet's block of it ends on every member too.
   * The debt stays local: each member owes its own share.
   *
   * @param className The key's class (`""`: the default class).
   * @param key The key, a non-empty string.
   * @param nowMs The time, ms.
   * @returns Whether the key had state here.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  reset(className: string, key: string, nowMs: number): boolean {
    const had = this.#enforcer.reset(className, key, nowMs);
    this.#rules?.unblock(nowMs, className, key);
    return had;
  }

  /** Where the other members reach this node. */
  get address(): Address {
    return this.#node.address;
  }

  /** Still joining: seeds that may name a peer, and no live member reached yet. */
  get joining(): boolean {
    return this.#node.joining;
  }

  /**
   * Why this node's fleet rules are out of step (`stats().rules.outOfStepReason`),
   * without computing the other figures; `""` when in step or not sharing rules.
   *
   * @param nowMs The time, ms.
   * @returns The reason, or `""`.
   */
  rulesOutOfStep(nowMs: number): string {
    return this.#rules?.outOfStep(nowMs) ?? "";
  }

  /**
   * Why this node is still joining (see `MembershipStats.joinBlocked`).
   *
   * @param nowMs The time, ms.
   * @returns The reason, "joining: ..."; empty when not joining.
   */
  joinBlocked(nowMs: number): string {
    return this.#node.joinBlocked(nowMs);
  }

  /**
   * The next seed name to look up, if one is due; see `Node.pollResolve`.
   *
   * @returns The name and its host, or `undefined` when no lookup is due.
   */
  pollResolve(): ResolveRequest | undefined {
    return this.#node.pollResolve();
  }

  /**
   * The IP addresses (text) seed `name` resolved to; see `Node.handleResolved`.
   *
   * @param nowMs The time, ms.
   * @param name The seed, as configured.
   * @param ips What it resolved to.
   * @throws {RangeError} if `name` is not one of the node's seeds.
   */
  handleResolved(nowMs: number, name: string, ips: readonly string[]): void {
    this.#node.handleResolved(nowMs, name, ips);
  }

  /**
   * The lookup of seed `name` failed; see `Node.handleResolveFailed`.
   *
   * @param nowMs The time, ms.
   * @param name The seed, as configured.
   * @throws {RangeError} if `name` is not one of the node's seeds.
   */
  handleResolveFailed(nowMs: number, name: string): void {
    this.#node.handleResolveFailed(nowMs, name);
  }

  /**
   * Checks a request; synchronous, no I/O, whatever the cluster's state.
   *
   * @param className The key's class (`""`: the default class).
   * @param key The key, a non-empty string.
   * @param cost What the request costs, a whole number ≥ 1.
   * @param nowMs The time, ms.
   * @returns The decision.
   * @throws {TypeError} when `key` is not a non-empty string or the class not a string.
   * @throws {RangeError} when `cost` is out of range.
   */
  check(className: string, key: string, cost: number, nowMs: number): Decision {
    return this.#enforcer.check(className, key, cost, nowMs);
  }

  /**
   * As {@link check}, with the shadow's decision.
   *
   * @param className The key's class.
   * @param key The key.
   * @param cost What the request costs.
   * @param nowMs The time, ms.
   * @returns The decision and the shadow's.
   * @throws {TypeError} as {@link FleetNode.check}.
   * @throws {RangeError} as {@link FleetNode.check}.
   */
  checkTraced(className: string, key: string, cost: number, nowMs: number): Traced {
    return this.#enforcer.checkTraced(className, key, cost, nowMs);
  }

  /**
   * Several checks, all or nothing.
   *
   * @param items The checks.
   * @param nowMs The time, ms.
   * @returns The batch's decision.
   * @throws {TypeError} when an item is malformed or appears twice.
   */
  checkAll(items: readonly BatchItem[], nowMs: number): BatchDecision {
    return this.#enforcer.checkAll(items, nowMs);
  }

  /**
   * A datagram from `from`.
   *
   * @param nowMs The time, ms.
   * @param from The packet's source address.
   * @param bytes The datagram; malformed ones are counted and dropped.
   */
  handleDatagram(nowMs: number, from: Address, bytes: Uint8Array): void {
    this.#lastNowMs = nowMs;
    this.#node.handleDatagram(nowMs, from, bytes);
  }

  /**
   * Holds every key at the floor from now on: the driver of this node has failed.
   *
   * @param nowMs The time, ms.
   */
  fail(nowMs: number): void {
    const m = this.#node.stats(nowMs);
    this.#allocator.fail(nowMs, {
      joining: m.joining,
      membersFull: m.membersFull,
      maxMembers: this.#maxMembers,
    });
  }

  /**
   * Runs what is due: membership's timers, and allocation's tick.
   *
   * @param nowMs The time, ms; a spurious call is harmless.
   */
  handleTimeout(nowMs: number): void {
    this.#lastNowMs = nowMs;
    this.#node.handleTimeout(nowMs);
    if (nowMs >= this.#nextTickMs) {
      const m = this.#node.stats(nowMs);
      this.#rules?.tick(nowMs, m.joining);
      this.#allocator.tick(nowMs, {
        // A member still learning the fleet's rules is held like a joiner.
        joining: m.joining || (this.#rules?.learning ?? false),
        membersFull: m.membersFull,
        maxMembers: this.#maxMembers,
      });
      this.#nextTickMs = nowMs + this.#tickMs;
    }
  }

  /**
   * The next datagram to send.
   *
   * @returns The datagram and where to send it, or `undefined` when there is none.
   */
  pollTransmit(): Transmit | undefined {
    if (this.#rules) {
      for (let send = this.#rules.pollSend(); send; send = this.#rules.pollSend()) {
        this.#node.sendRules(this.#lastNowMs, send.to, send.bytes, send.bare);
      }
    }
    return this.#node.pollTransmit();
  }

  /**
   * When {@link handleTimeout} is next due.
   *
   * @returns The time, ms, or `undefined` when nothing is due.
   */
  pollTimeout(): number | undefined {
    const membership = this.#node.pollTimeout();
    return membership === undefined ? undefined : Math.min(membership, this.#nextTickMs);
  }

  /** Tells the peers this node is going; drain {@link pollTransmit} afterwards. */
  leave(): void {
    this.#node.leave();
  }

  /**
   * The rate a key is admitted at here now, per second: its share, before the burst.
   *
   * @param className The key's class.
   * @param key The key.
   * @returns Requests a second.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  share(className: string, key: string): number {
    return this.#enforcer.currentRate(className, key);
  }

  /**
   * This life's number, drawn at start: a member's records name the life they are about.
   *
   * @returns The life.
   *
   * @internal For the simulator's count of false deaths (`src/sim/faces/fleet.ts`).
   */
  get life(): number {
    return this.#node.life;
  }

  /**
   * The members this node holds, itself excluded, the dead not yet forgotten included.
   *
   * @returns One entry per member.
   */
  members(): MemberInfo[] {
    return this.#node.members();
  }

  /**
   * The hot keys and how each is split among the members, as this node sees it.
   *
   * @returns One view per hot key.
   */
  hotKeys(): HotKeyView[] {
    return this.#allocator.hotKeys();
  }

  /**
   * The demand reports this node holds of its peers, by origin ID: each
   * one's life and round, its age when it came and when it came (this
   * node's time). They change in place as newer ones come: read them
   * between the node's calls, not across them.
   *
   * @returns One entry per origin held.
   *
   * @internal For the simulator's figure of the relay's room (`src/sim/figures/relay_room.ts`).
   */
  heardReports(): IterableIterator<[string, HeldReport]> {
    return this.#allocator.heardReports();
  }

  /**
   * A snapshot of what this node did and sees.
   *
   * @param nowMs The time, ms.
   * @returns The figures.
   */
  stats(nowMs: number): FleetStats {
    const rules = this.#rules?.stats(nowMs) ?? NO_RULES;
    return {
      ...this.#enforcer.stats(nowMs),
      ...this.#allocator.stats(nowMs),
      ...this.#node.stats(nowMs),
      rules: { ...rules, refused: rules.refused + this.#refusedRules },
    };
  }
}
