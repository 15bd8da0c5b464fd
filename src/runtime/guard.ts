/**
 * The guard, what a service holds to decide requests, and its builder: the
 * facade. Every method of `Guard` is one line to the part that does it:
 * checks to the enforcer (and `acquire` to its lines, `acquire.ts`), the
 * operations on one key to the enforcer or the fleet node (which one,
 * decided once in `assemble.ts`), the rules to `guard_rules.ts`, the
 * observation to `guard_observer.ts`, the lifecycle to `guard_life.ts`.
 * The builder's methods are the guard's options, each checked where it is
 * set, and the whole checked once more by `resolveGuardOptions` when the
 * guard is spawned; `assemble.ts` then makes the guard's parts from them.
 *
 * Why this file is over 400 lines: it is the public documentation of the
 * two classes, every method's (its parameters, results, errors, examples),
 * with one-line bodies; the parts hold the code. The two classes share it
 * because their public faces name each other (`Guard.builder()` returns a
 * `GuardBuilder`, whose `spawn()` returns a `Guard`): in two modules that is
 * a circle of imports, types included. Here each class's constructor stays
 * private and the other reaches it through a binding of this module, set as
 * the class is declared, so no registry, and no order of loading, is involved.
 *
 * @module
 */

import type { BatchDecision, Enforcer, Traced } from "../core/enforcer.ts";
import {
  type BatchItem,
  checkOption,
  type CheckOptions,
  type GuardOptions,
  type KeyOptions,
  type NumericOption,
} from "../core/options.ts";
import {
  checkAddress,
  checkAdvertise,
  checkBoolean,
  checkClass,
  checkClock,
  checkPolicy,
  checkSalt,
  checkSeeds,
  resolveGuardOptions,
} from "../core/option_checks.ts";
import type { Decision } from "../core/decision.ts";
import type { KeyLimit } from "../core/key_limit.ts";
import { checkLimit, Limit } from "../core/limit.ts";
import type { ClassEntry, KeyLimitEntry, ShadowEntry } from "../core/rules.ts";
import type { PartitionPolicy } from "../core/partition.ts";
import { authConfig, type GossipAuthMode, type Secret } from "../core/auth.ts";
import type { Clock } from "./clock.ts";
import type { GossipCounters } from "./gossip.ts";
import type { Stats } from "./stats.ts";
import type { KeyStats } from "./keystats.ts";
import type { FleetView } from "./fleet_view.ts";
import type { GuardParts, KeyOperations } from "./_parts.ts";
import { type AcquireOptions, Waiters } from "./acquire.ts";
import { GuardRules } from "./guard_rules.ts";
import { GuardObserver } from "./guard_observer.ts";
import { GuardLife } from "./guard_life.ts";
import { assemble } from "./assemble.ts";

export type { BatchItem, CheckOptions, KeyOptions } from "../core/options.ts";
export type { AcquireOptions } from "./acquire.ts";

/** Guard's private constructor, for the builder's `spawn()`: set as the class is declared. */
let guardOf: (parts: GuardParts) => Guard;
/** GuardBuilder's private constructor, for `Guard.builder()`: set as the class is declared. */
let newBuilder: () => GuardBuilder;

/**
 * One rate limit per key, decided locally. Build one with
 * {@link Guard.builder}; share it across the whole process.
 *
 * Its methods come in five parts, in this order: the checks
 * ({@link Guard.check}, `checkTraced`, `checkAll`, `peek`, `acquire`); the
 * operations on one key ({@link Guard.refund}, `reset`, `block`); the rules
 * ({@link Guard.setLimit}, `setClass`, `setKeyLimit`, `setShadow`,
 * `setDryRun`, their bulk setters and readers); the observation
 * ({@link Guard.stats}, `fleetView`, `keyStats`, `share`, `isJoining`, ...);
 * and the lifecycle ({@link Guard.setGossipAuth}, `isRunning`, `leave`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard, Limit } from "@rateguard/guard";
 *
 * const guard = await Guard.builder()
 *   .limit(100) // a second, per key, in the default class
 *   .class("pro", Limit.perMinute(60_000).burst(50))
 *   .spawn();
 *
 * if (guard.check("ip:203.0.113.7").allowed) {
 *   // serve the request
 * }
 * assert(guard.check("tenant:42", { class: "pro" }).allowed);
 * await guard.leave();
 * ```
 */
export class Guard {
  readonly #enforcer: Enforcer;
  readonly #clock: Clock;
  readonly #operations: KeyOperations;
  readonly #waiters: Waiters;
  readonly #rules: GuardRules;
  readonly #observer: GuardObserver;
  readonly #life: GuardLife;

  static {
    guardOf = (parts) => new Guard(parts);
  }

  /** Use {@link Guard.builder}: a guard is built, never constructed. */
  private constructor(parts: GuardParts) {
    this.#enforcer = parts.enforcer;
    this.#clock = parts.clock;
    this.#operations = parts.operations;
    this.#waiters = new Waiters(parts.enforcer, parts.clock);
    this.#rules = new GuardRules(parts);
    this.#life = new GuardLife(parts);
    this.#observer = new GuardObserver(parts, this.#life);
  }

  /**
   * A builder with every option at its default.
   *
   * @returns A new {@link GuardBuilder}; set a limit on it, then `spawn()`.
   */
  static builder(): GuardBuilder {
    return newBuilder();
  }

  // Checks: each decides from memory, synchronously (acquire waits in the key's line).

  /**
   * Checks a request for `key`, consuming it if admitted.
   *
   * @param key The key, a non-empty string.
   * @param options The class (the default class when left out) and the cost.
   * @returns The decision: allowed, remaining, retryAfterMs, resetMs.
   * @throws {TypeError} when `key` is not a non-empty string or the class not a string.
   * @throws {RangeError} when `cost` is not a whole number from 1 to 4,294,967,295, or the
   *   key or class is longer than `maxKeyBytes` bytes of UTF-8.
   */
  check(key: string, options?: CheckOptions): Decision {
    // No options (the common case) or a caller's reused object: nothing is allocated.
    if (options === undefined) return this.#enforcer.check("", key, 1, this.#clock());
    return this.#enforcer.check(options.class ?? "", key, options.cost ?? 1, this.#clock());
  }

  /**
   * As {@link Guard.check}, with what the key's shadow limit would have decided.
   *
   * @param key The key, a non-empty string.
   * @param options The class and the cost, as for {@link Guard.check}.
   * @returns The decision and the shadow's (undefined when the key has no shadow).
   * @throws {TypeError} as {@link Guard.check}.
   * @throws {RangeError} as {@link Guard.check}.
   */
  checkTraced(key: string, options?: CheckOptions): Traced {
    return this.#enforcer.checkTraced(
      options?.class ?? "",
      key,
      options?.cost ?? 1,
      this.#clock(),
    );
  }

  /**
   * Checks several keys at once, all or nothing: admitted only if every
   * item is, and a denied batch consumes nothing.
   *
   * @param items The checks, each a key with its class and cost.
   * @returns The batch's decision, with one decision per item.
   * @throws {TypeError} when the same class and key appear twice, or an item is malformed.
   */
  checkAll(items: readonly BatchItem[]): BatchDecision {
    return this.#enforcer.checkAll(items, this.#clock());
  }

  /**
   * What the next check of `key` would say; consumes and counts nothing.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns The decision a check of cost 1 would get now.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when the key or class is longer than `maxKeyBytes` bytes of UTF-8.
   */
  peek(key: string, options?: KeyOptions): Decision {
    return this.#enforcer.peek(options?.class ?? "", key, this.#clock());
  }

  /**
   * Waits until a check of `key` is admitted, then takes it: in the key's
   * line, callers admitted in the order they came, each by one check, so a
   * wait counts as one request however long it lasts. At most `maxWaitMs`
   * (10 s by default): answered at once with the denial when the wait behind
   * the line would pass it (a cost above the burst, a long block), or when
   * 4,096 callers already wait here; a wait that times out or is aborted
   * counts as one denied request. Cancel it with `signal`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Guard } from "@rateguard/guard";
   *
   * const guard = await Guard.builder().limit(1_000).burst(1).spawn();
   * guard.check("job:7");
   * const decision = await guard.acquire("job:7", { maxWaitMs: 1_000 });
   * assert(decision.allowed);
   * ```
   *
   * @param key The key, a non-empty string.
   * @param options The class, the cost, a signal, and the longest wait.
   * @returns The admission, or the denial when it cannot come in time.
   * @throws {TypeError} as {@link Guard.check}; rejects with the signal's reason when aborted.
   * @throws {RangeError} as {@link Guard.check}, or when `maxWaitMs` is out of range.
   * @throws {RateguardError} `RulesFull` when fleet rules are shared and their table has no room
   *   for the change: it is made nowhere, here or on the fleet.
   */
  acquire(key: string, options?: AcquireOptions): Promise<Decision> {
    const target = { className: options?.class ?? "", key, cost: options?.cost ?? 1 };
    return this.#waiters.acquire(target, options);
  }

  // Operations on one key: what a caller does to a key besides checking it.

  /**
   * Gives back what a check of `key` took, when the work it admitted did not
   * happen (the upstream call failed, say): its debt comes down by `cost`
   * requests, never below nothing, so a refund grants at most what the key
   * still owes. Local to this instance. A blocked key is left blocked.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Guard } from "@rateguard/guard";
   *
   * const guard = await Guard.builder().limit(1).burst(1).spawn();
   * assert(guard.check("tenant:42").allowed);
   * guard.refund("tenant:42"); // the call it admitted failed
   * assert(guard.check("tenant:42").allowed);
   * ```
   *
   * @param key The key, a non-empty string.
   * @param options The class and the cost to give back (1 when left out).
   * @returns Whether the key's state changed: false with no state here, nothing owed, or a block.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when `cost` is out of range, or the key or class too long.
   */
  refund(key: string, options?: CheckOptions): boolean {
    return this.#enforcer.refund(options?.class ?? "", key, options?.cost ?? 1, this.#clock());
  }

  /**
   * Forgets what `key` owes, a block included: it starts again as a new key.
   * The debt is this instance's own (its share), so forgetting it is local;
   * with `fleetRules(true)`, a block of the key made anywhere in the fleet
   * ends on every instance.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns Whether the key had state here.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when the key or class is longer than `maxKeyBytes` bytes of UTF-8.
   */
  reset(key: string, options?: KeyOptions): boolean {
    return this.#operations.reset(options?.class ?? "", key, this.#clock());
  }

  /**
   * Denies every check of `key` for `ms` (a penalty box), then lets its
   * burst come back at its rate. A longer block replaces a shorter one;
   * `reset` lifts it. Shown in `keyStats(key).blockedForMs`. Local to this
   * instance, unless the guard shares rules (`fleetRules(true)`): then every
   * instance of the fleet blocks the key until the same instant.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Guard } from "@rateguard/guard";
   *
   * const guard = await Guard.builder().limit(100).spawn();
   * guard.block("ip:203.0.113.7", 60_000);
   * const denied = guard.check("ip:203.0.113.7");
   * assert(!denied.allowed && denied.retryAfterMs >= 60_000);
   * assert(guard.keyStats("ip:203.0.113.7")!.blockedForMs > 59_000);
   * ```
   *
   * @param key The key, a non-empty string.
   * @param ms How long, above 0 and at most a year.
   * @param options The class; the default class when left out.
   * @returns Whether it is blocked: always true. Blocks take no place in the
   *   key table; when `maxBlocks` keys are blocked, the block nearest its end
   *   ends to make room (counted in `stats().blocksEvicted`).
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when `ms` is out of range, or the key or class too long.
   * @throws {RateguardError} `RulesFull` when fleet rules are shared and
   *   their table has no room for the block: nothing is blocked, here or
   *   on the fleet (`stats().rules.tableFullReason` says why).
   */
  block(key: string, ms: number, options?: KeyOptions): boolean {
    return this.#operations.block(options?.class ?? "", key, ms, this.#clock());
  }

  // Rules: the limits, live; with fleetRules(true) each change goes to the fleet.

  /**
   * Sets the default class's limit. Keys keep their state: no fresh burst.
   *
   * @param limit The new limit.
   * @throws {TypeError} when `limit` is not a {@link Limit}.
   * @throws {RateguardError} `RulesFull` when fleet rules are shared and their table has no room
   *   for the change: it is made nowhere, here or on the fleet.
   */
  setLimit(limit: Limit): void {
    this.#rules.setLimit(limit);
  }

  /**
   * Adds or changes a class, live.
   *
   * @param name The class, a non-empty string.
   * @param limit Its limit.
   * @throws {TypeError} when `name` is not a string or `limit` not a {@link Limit}.
   * @throws {RangeError} when `name` is `""` (the default class: use `setLimit`).
   * @throws {RateguardError} `TooManyClasses` when a new class would pass `maxClasses`.
   */
  setClass(name: string, limit: Limit): void {
    this.#rules.setClass(name, limit);
  }

  /**
   * Removes a class, its shadow and its key limits; its keys fall back to
   * the default limit.
   *
   * @param name The class.
   * @returns Whether there was such a class.
   * @throws {RateguardError} `RulesFull` when fleet rules are shared and their table has no room
   *   for the change: it is made nowhere, here or on the fleet.
   */
  removeClass(name: string): boolean {
    return this.#rules.removeClass(name);
  }

  /**
   * Replaces all named classes at once, or none if one is refused; a class
   * left out goes with its shadow and key limits, as {@link Guard.removeClass}.
   *
   * @param entries The classes, as `[name, limit]`.
   * @throws {TypeError} as {@link Guard.setClass}, naming the entry.
   * @throws {RangeError} as {@link Guard.setClass}.
   * @throws {RateguardError} `TooManyClasses` when there are more than `maxClasses`.
   */
  setClasses(entries: Iterable<ClassEntry>): void {
    this.#rules.setClasses(entries);
  }

  /**
   * The named classes with their limits.
   *
   * @returns A fresh array of `[name, limit]`.
   */
  classes(): ClassEntry[] {
    return this.#rules.classes();
  }

  /**
   * The limit a key is held to across the fleet: its own, its class's, or
   * the default one for a class this instance does not know.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns The limit.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when the key or class is longer than `maxKeyBytes` bytes of UTF-8.
   */
  limitFor(key: string, options?: KeyOptions): Limit {
    return this.#rules.limitFor(key, options);
  }

  /**
   * Gives one key its own limit, or the limit of a class ({@link KeyLimit.class}).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Guard, KeyLimit, Limit } from "@rateguard/guard";
   *
   * const guard = await Guard.builder().limit(10).class("pro", Limit.perSecond(1_000)).spawn();
   * guard.setKeyLimit("tenant:42", Limit.perSecond(2_000), { class: "pro" }); // a deal of its own
   * guard.setKeyLimit("tenant:7", KeyLimit.class("pro")); // follows Pro, as Pro changes
   * assert.equal(guard.limitFor("tenant:7").ratePerSec(), 1_000);
   * ```
   *
   * @param key The key, a non-empty string.
   * @param limit Its limit, or `KeyLimit.class(name)` to follow a class's.
   * @param options The key's class; the default class when left out.
   * @throws {TypeError} when an argument has the wrong type (a string as the
   *   limit or as the options: the class-first order of 0.2.0).
   * @throws {RateguardError} `TooManyKeyLimits` when a new entry would pass `maxKeyLimits`.
   */
  setKeyLimit(key: string, limit: Limit | KeyLimit, options?: KeyOptions): void {
    this.#rules.setKeyLimit(key, limit, options);
  }

  /**
   * Removes a key's own limit; it falls back to its class's.
   *
   * @param key The key.
   * @param options The key's class; the default class when left out.
   * @returns Whether the key had a limit of its own.
   * @throws {TypeError} when `options` is not an object (a class name: the
   *   class-first order of 0.2.0).
   * @throws {RateguardError} `RulesFull` when fleet rules are shared and their table has no room
   *   for the change: it is made nowhere, here or on the fleet.
   */
  removeKeyLimit(key: string, options?: KeyOptions): boolean {
    return this.#rules.removeKeyLimit(key, options);
  }

  /**
   * Replaces every key limit, or none if one is refused.
   *
   * @param entries The key limits, as `[className, key, limit]`.
   * @throws {TypeError} as {@link Guard.setKeyLimit}, naming the entry.
   * @throws {RateguardError} `TooManyKeyLimits` when there are more than `maxKeyLimits`.
   */
  setKeyLimits(entries: Iterable<KeyLimitEntry>): void {
    this.#rules.setKeyLimits(entries);
  }

  /**
   * Every key limit.
   *
   * @returns A fresh array of `[className, key, limit]`.
   */
  keyLimits(): KeyLimitEntry[] {
    return this.#rules.keyLimits();
  }

  /**
   * Gives a class a shadow limit, or removes it: a limit that decides
   * nothing and counts what it would have denied.
   *
   * @param className The class (`""`: the default class).
   * @param limit The shadow, or `null` to remove it.
   * @throws {TypeError} when `limit` is neither a {@link Limit} nor `null`.
   * @throws {RateguardError} `UnknownClass` when this instance has no such class.
   */
  setShadow(className: string, limit: Limit | null): void {
    this.#rules.setShadow(className, limit);
  }

  /**
   * Every shadow limit.
   *
   * @returns A fresh array of `[className, limit]`.
   */
  shadows(): ShadowEntry[] {
    return this.#rules.shadows();
  }

  /**
   * Replaces every shadow, or none if one is refused.
   *
   * @param entries The shadows, as `[className, limit]`.
   * @throws {TypeError} as {@link Guard.setShadow}.
   * @throws {RateguardError} `UnknownClass` when an entry names a class this instance lacks.
   * @throws {RateguardError} `RulesFull` when fleet rules are shared and their table has no room
   *   for the change: it is made nowhere, here or on the fleet.
   */
  setShadows(entries: Iterable<ShadowEntry>): void {
    this.#rules.setShadows(entries);
  }

  /**
   * Turns the dry run on (admit all, count would-be denials) or off.
   *
   * @param on Whether to run dry.
   * @throws {TypeError} when `on` is not a boolean.
   */
  setDryRun(on: boolean): void {
    this.#rules.setDryRun(on);
  }

  // Observation: reads of this instance and its view of the fleet; they change nothing.

  /**
   * What this instance has decided so far, and how it sees the cluster.
   *
   * @returns A fresh snapshot.
   */
  stats(): Stats {
    return this.#observer.stats();
  }

  /**
   * The fleet as this instance sees it, for a picture of it (the sidecar's
   * dashboard): the members, the hot keys with each member's demand and
   * share, and the keys denied most, by name. Reads; changes nothing.
   *
   * @returns A fresh view; no members nor hot keys for a standalone guard.
   */
  fleetView(): FleetView {
    return this.#observer.fleetView();
  }

  /**
   * How one key fares here, over the last ten seconds or so: requests,
   * denials and shadow denials a second, its share, its limit and shadow.
   * Asking makes no state for the key.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns The key's figures, or `undefined` when this instance keeps no state for it.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when the key or class is longer than `maxKeyBytes` bytes of UTF-8.
   */
  keyStats(key: string, options?: KeyOptions): KeyStats | undefined {
    return this.#observer.keyStats(key, options);
  }

  /**
   * The rate `key` is admitted at here now, per second: its share, before the burst.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns Requests a second.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when the key or class is longer than `maxKeyBytes` bytes of UTF-8.
   */
  share(key: string, options?: KeyOptions): number {
    return this.#enforcer.currentRate(options?.class ?? "", key);
  }

  /**
   * The 64-bit hash a key travels under, and is named by in
   * `stats().mostDenied`: keyed by this guard's salt when it has one.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns The hash, as an unsigned 64-bit bigint.
   * @throws {TypeError} when `key` is not a non-empty string or the class not a string.
   * @throws {RangeError} when the key or class is longer than `maxKeyBytes` bytes of UTF-8.
   */
  keyHash(key: string, options?: KeyOptions): bigint {
    return this.#observer.keyHash(key, options);
  }

  /**
   * The longest key or class name this guard takes, in bytes of UTF-8.
   *
   * @returns Its `maxKeyBytes`.
   */
  maxKeyBytes(): number {
    return this.#observer.maxKeyBytes();
  }

  /**
   * The partition policy this guard applies once it gossips.
   *
   * @returns The policy it was built with.
   */
  partitionPolicy(): PartitionPolicy {
    return this.#observer.partitionPolicy();
  }

  /**
   * Members this instance sees, itself included.
   *
   * @returns The count; 1 for a standalone guard.
   */
  clusterSize(): number {
    return this.#observer.clusterSize();
  }

  /**
   * Whether the guard is still joining its fleet: it has seeds that may name
   * a peer and has reached no live member yet, so it holds every key at the
   * floor. The same as `stats().joining`, without computing the rest.
   *
   * @returns Whether it is joining; false for a standalone guard.
   */
  isJoining(): boolean {
    return this.#observer.isJoining();
  }

  /**
   * Why the guard is still joining, in one line an operator can act on
   * ("joining: seed rateguard.svc:7946 has not resolved (5 lookups
   * failed)"). The same as `stats().joinBlocked`, without computing the rest.
   *
   * @returns The reason; empty when not joining, and for a standalone guard.
   */
  joinBlocked(): string {
    return this.#observer.joinBlocked();
  }

  /**
   * Why this instance's fleet rules are out of step: its rules digest has
   * differed from a live peer's for over a minute (docs/fleet-rules.md).
   * The same as `stats().rules.outOfStepReason`, without computing the rest.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Guard } from "@rateguard/guard";
   *
   * const guard = await Guard.builder().limit(10).spawn();
   * assert.equal(guard.rulesOutOfStep(), "");
   * await guard.leave();
   * ```
   *
   * @returns The reason, with the digests that differ; `""` when in step, standalone, or not sharing rules.
   */
  rulesOutOfStep(): string {
    return this.#observer.rulesOutOfStep();
  }

  /**
   * Why the fleet rules table is full, `""` when it is not (or rules are
   * not shared): the same as `stats().rules.tableFullReason`, without
   * computing the rest. While it is full, a change it has no room for is
   * refused with `RateguardError` `RulesFull`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Guard } from "@rateguard/guard";
   *
   * await using guard = await Guard.builder().limit(100).spawn();
   * assert.equal(guard.rulesTableFull(), "");
   * ```
   *
   * @returns The reason, with the table's counts; `""` when it has room, standalone, or not sharing rules.
   */
  rulesTableFull(): string {
    return this.#observer.rulesTableFull();
  }

  /**
   * What the background task sent and received, and the socket errors it
   * survived.
   *
   * @returns The counters; `undefined` for a standalone guard.
   */
  traffic(): GossipCounters | undefined {
    return this.#observer.traffic();
  }

  /**
   * Where the other instances reach this one.
   *
   * @returns `ip:port` (`[v6]:port`); `undefined` for a standalone guard.
   */
  address(): string | undefined {
    return this.#observer.address();
  }

  // Lifecycle: signing, running, leaving.

  /**
   * Takes a step of a signing rollout, or of a rotation, with no restart:
   * the mode and at most two secrets, the first signs and either verifies.
   * See docs/security.md, "Turning signing on, and rotating", for the order of the steps.
   *
   * @param mode `GossipAuth.Off`, `Transitional` or `Required`.
   * @param secrets At most two secrets; the first signs, either verifies.
   * @throws {TypeError} when the mode or a secret is not one.
   * @throws {RangeError} when there are more than two secrets, or none for a mode that signs.
   */
  setGossipAuth(mode: GossipAuthMode, secrets: readonly Secret[] = []): void {
    this.#life.setGossipAuth(mode, secrets);
  }

  /**
   * Whether the guard still runs: false once it has left, or if its
   * background task died (a bug; the guard then holds every key at the floor).
   *
   * @returns Whether it runs.
   */
  isRunning(): boolean {
    return this.#life.isRunning();
  }

  /**
   * Tells the peers this instance is going (they take its share at once),
   * then stops its timer and closes its socket once the goodbyes are out,
   * waiting at most 500 ms for them. Checks still work afterwards, every
   * key at the floor, which the peers no longer count.
   *
   * @returns A promise that settles once the socket is closed, within about 500 ms.
   */
  leave(): Promise<void> {
    return this.#life.leave();
  }

  /**
   * `await using guard = ...` leaves when the scope ends.
   *
   * @returns What {@link Guard.leave} returns.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.leave();
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Builds a {@link Guard}. Only a limit is required; without `bind` the
 * guard is standalone: it enforces each key locally, with no gossip. Each
 * method sets one field of {@link GuardOptions}, whose documentation gives
 * every default and bound; `spawn()` checks them as a whole.
 *
 * Why a builder and no `Guard.spawn(options)` beside it: one way to build
 * a guard, each mistake reported by the method that made it, and the
 * options type still one, documented in one place.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard, Limit, PartitionPolicy } from "@rateguard/guard";
 *
 * const guard = await Guard.builder()
 *   .defaultLimit(Limit.perMinute(1_000))
 *   .burst(20)
 *   .class("free", Limit.perSecond(10))
 *   .trackedKeys(8_192)
 *   .partitionPolicy(PartitionPolicy.holdDown(30_000))
 *   .spawn();
 * assert(guard.stats().trackedKeys === 0);
 * ```
 */
export class GuardBuilder {
  readonly #options: Mutable<GuardOptions> = {};
  readonly #classes = new Map<string, Limit>();

  static {
    newBuilder = () => new GuardBuilder();
  }

  /** Use `Guard.builder()`. */
  private constructor() {}

  /**
   * The default class's limit in requests per second, across the fleet.
   *
   * @param perSec Requests a second, more than 0.
   * @returns This builder.
   * @throws {RangeError} when `perSec` is not a rate a {@link Limit} takes.
   * @throws {TypeError} when `perSec` is a {@link Limit}: that goes to {@link defaultLimit}.
   */
  limit(perSec: number): this {
    if ((perSec as unknown) instanceof Limit) {
      throw new TypeError(
        `limit(perSec) takes requests a second; give a Limit to defaultLimit(limit), got ${perSec}`,
      );
    }
    this.#options.limit = Limit.perSecond(perSec);
    return this;
  }

  /**
   * The default class's limit as any {@link Limit}, per second, minute or hour.
   *
   * @param limit The limit.
   * @returns This builder.
   * @throws {TypeError} when `limit` is not a {@link Limit}.
   */
  defaultLimit(limit: Limit): this {
    this.#options.limit = checkLimit(limit, "defaultLimit");
    return this;
  }

  /**
   * The default class's burst: requests one instance admits back to back on
   * top of its share, in whichever order the limit is set.
   *
   * @param size 0 (taken as 1) to 4,194,303.
   * @returns This builder.
   * @throws {RangeError} when `size` is out of those bounds.
   */
  burst(size: number): this {
    Limit.perSecond(1).burst(size); // validates with the Limit's own message
    this.#options.burst = size;
    return this;
  }

  /**
   * A class of limits; check its keys with `check(key, { class: name })`.
   *
   * @param name The class, a non-empty string.
   * @param limit Its limit.
   * @returns This builder.
   * @throws {TypeError} when `name` is not a non-empty string or `limit` not a {@link Limit}.
   *   A name longer than `maxKeyBytes` bytes of UTF-8 is refused by `spawn()`, with a
   *   `RangeError`, once that bound is known.
   */
  class(name: string, limit: Limit): this {
    checkClass(name, limit);
    this.#classes.set(name, limit);
    this.#options.classes = this.#classes;
    return this;
  }

  /**
   * Admit every request and count those that would be denied.
   *
   * @param on Whether to run dry (default false).
   * @returns This builder.
   * @throws {TypeError} when `on` is not a boolean.
   */
  dryRun(on: boolean): this {
    this.#options.dryRun = checkBoolean(on, "dryRun");
    return this;
  }

  /**
   * Share rule changes with the fleet: a class, key limit, shadow, default
   * limit or dry run changed through this guard's admin methods applies on
   * every instance that shares them too, and theirs here (see
   * `GuardOptions.fleetRules` and docs/fleet-rules.md). Only with `bind`.
   *
   * @param on Whether to share them (default false).
   * @returns This builder.
   * @throws {TypeError} when `on` is not a boolean.
   */
  fleetRules(on: boolean): this {
    this.#options.fleetRules = checkBoolean(on, "fleetRules");
    return this;
  }

  /**
   * Share the burst with the fleet: each instance's burst follows its share
   * of the limit, never below one request (and half a request of slack), so
   * that the fleet admits at most the limit plus one burst (past burst/1.5
   * instances, one and a half requests each). A client bursting against one instance of a
   * big fleet gets a smaller burst there (see `GuardOptions.sharedBurst`).
   * Not called, the burst follows the fleet's size: shared once a burst on
   * each instance would add up to more than half the limit's second.
   *
   * @param on Whether bursts follow shares at any size (default: as the fleet's size says).
   * @returns This builder.
   * @throws {TypeError} when `on` is not a boolean.
   */
  sharedBurst(on: boolean): this {
    this.#options.sharedBurst = checkBoolean(on, "sharedBurst");
    return this;
  }

  /**
   * Keys kept with state at once; the table holds twice as many.
   *
   * @param n From `hotKeys` to 1,048,576 (default 4096).
   * @returns This builder.
   * @throws {RangeError} when `n` is out of bounds (checked against `hotKeys` at spawn).
   */
  trackedKeys(n: number): this {
    return this.#number("trackedKeys", n);
  }

  /**
   * Keys coordinated with the peers at once.
   *
   * @param n 1 to 64 (default 64).
   * @returns This builder.
   * @throws {RangeError} when `n` is out of bounds.
   */
  hotKeys(n: number): this {
    return this.#number("hotKeys", n);
  }

  /**
   * The longest key (and class name) taken, in bytes of UTF-8: a longer one
   * is a `RangeError` naming the limit, so what a tracked key costs is
   * bounded whatever clients send.
   *
   * @param n 1 to 65,536 (default 1024).
   * @returns This builder.
   * @throws {RangeError} when `n` is out of bounds.
   */
  maxKeyBytes(n: number): this {
    return this.#number("maxKeyBytes", n);
  }

  /**
   * Named classes kept at most.
   *
   * @param n 0 to 4,096 (default 64).
   * @returns This builder.
   * @throws {RangeError} when `n` is out of bounds.
   */
  maxClasses(n: number): this {
    return this.#number("maxClasses", n);
  }

  /**
   * Key limits kept at most.
   *
   * @param n 0 to 1,048,576 (default 4096).
   * @returns This builder.
   * @throws {RangeError} when `n` is out of bounds.
   */
  maxKeyLimits(n: number): this {
    return this.#number("maxKeyLimits", n);
  }

  /**
   * Keys blocked at once (`block`, and with fleet rules the fleet's
   * blocks). Blocks live in a set of their own, never in the key table:
   * however many are made, checks keep every place of the table. A block
   * made when the set is full ends the one nearest its end, counted in
   * `stats().blocksEvicted`.
   *
   * @example Room for 100 blocks
   * ```ts
   * import { Guard } from "@rateguard/guard";
   * import assert from "node:assert/strict";
   *
   * const guard = await Guard.builder().limit(10).maxBlocks(100).spawn();
   * guard.block("ip:203.0.113.7", 60_000);
   * assert(guard.stats().blockedKeys === 1);
   * ```
   *
   * @param n 1 to 65,536 (default 1024).
   * @returns This builder.
   * @throws {RangeError} when `n` is out of bounds.
   */
  maxBlocks(n: number): this {
    return this.#number("maxBlocks", n);
  }

  /**
   * What to do when the cluster may be split. Takes effect once the guard gossips.
   *
   * @param policy A {@link PartitionPolicy} or its text (`optimistic`, `quorum`,
   *   `holddown:10s`); default: hold down for ten seconds.
   * @returns This builder.
   * @throws {TypeError} when `policy` is neither.
   */
  partitionPolicy(policy: PartitionPolicy | string): this {
    this.#options.partitionPolicy = checkPolicy(policy);
    return this;
  }

  /**
   * The UDP address to gossip on. Leave it out for a standalone guard.
   * Binding `0.0.0.0` or `::` needs {@link GuardBuilder.advertise}.
   *
   * @param address `ip:port` or `[v6]:port`; port 0 picks a free one.
   * @returns This builder.
   * @throws {TypeError} when `address` is not an IP literal and a port.
   */
  bind(address: string): this {
    checkAddress(address, "bind");
    this.#options.bind = address;
    return this;
  }

  /**
   * Where the other instances reach this one; by default the bind address.
   *
   * @param address `ip:port` or `[v6]:port`.
   * @returns This builder.
   * @throws {TypeError} when `address` is not an IP literal and a port.
   * @throws {RangeError} when it is unspecified or its port 0.
   */
  advertise(address: string): this {
    checkAdvertise(address);
    this.#options.advertise = address;
    return this;
  }

  /**
   * Peers to join through; any live member will do. Names are looked up
   * again while the guard runs, so one name for the whole fleet (a
   * Kubernetes headless service) keeps up with it.
   *
   * @param seeds Each `ip:port`, `[v6]:port` or `host:port`.
   * @returns This builder.
   * @throws {TypeError} naming the first seed that is none of these.
   */
  seeds(seeds: Iterable<string>): this {
    this.#options.seeds = checkSeeds(seeds);
    return this;
  }

  /**
   * How often nodes exchange membership and demand.
   *
   * @param ms 10 to 60,000 (default 200).
   * @returns This builder.
   * @throws {RangeError} when `ms` is out of bounds.
   */
  protocolPeriodMs(ms: number): this {
    return this.#number("protocolPeriodMs", ms);
  }

  /**
   * Members tracked at most, the dead not yet forgotten and itself included.
   *
   * @param n 1 to 65,536 (default 8192).
   * @returns This builder.
   * @throws {RangeError} when `n` is out of bounds.
   */
  maxMembers(n: number): this {
    return this.#number("maxMembers", n);
  }

  /**
   * How many keys `stats().mostDenied` and `mostShadowDenied` list.
   *
   * @param k 0 (none) to 1,024 (default 10).
   * @returns This builder.
   * @throws {RangeError} when `k` is out of bounds.
   */
  mostDenied(k: number): this {
    return this.#number("mostDenied", k);
  }

  /**
   * The clock the guard reads: a function returning monotonic milliseconds,
   * fractional or not, that never goes backwards. By default the runtime's
   * monotonic clock (`performance.now()`). Give one to drive a guard on
   * virtual time in tests and simulations, or to start it as if it had been
   * up for years. The guard counts time from the clock's reading at
   * `spawn()`, in whole microseconds. A reading after that which is not a
   * finite number throws a `TypeError` naming `clock` from the call that
   * read it; a reading below the last one is taken as the last one, so a
   * clock stepped back stops time rather than refilling bursts.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Guard, Limit } from "@rateguard/guard";
   *
   * let nowMs = 365 * 86_400_000; // a year of uptime
   * const guard = await Guard.builder()
   *   .defaultLimit(Limit.perSecond(3).burst(3))
   *   .clock(() => nowMs)
   *   .spawn();
   * for (let i = 0; i < 3; i++) assert(guard.check("k").allowed);
   * const denied = guard.check("k");
   * assert(!denied.allowed && denied.retryAfterMs === 333.334 && denied.resetMs === 1_000);
   * nowMs += 333.334;
   * assert(guard.check("k").allowed);
   * ```
   *
   * @param clock Monotonic milliseconds.
   * @returns This builder.
   * @throws {TypeError} when `clock` is not a function.
   */
  clock(clock: () => number): this {
    this.#options.clock = checkClock(clock);
    return this;
  }

  /**
   * Signs the gossip, or says it goes unsigned. A guard that binds needs
   * this said, even the first of a fleet (which has no seeds): with no
   * secret, `GossipAuth.Off` is the operator's word that the network is
   * trusted. A standalone guard needs none. See docs/security.md.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GossipAuth, Guard, Secret } from "@rateguard/guard";
   *
   * const secret = new Secret(crypto.getRandomValues(new Uint8Array(32)));
   * const guard = await Guard.builder().limit(100).bind("127.0.0.1:0")
   *   .gossipAuth(GossipAuth.Required, [secret])
   *   .spawn();
   * assert(guard.stats().gossipAuth === "required");
   * await guard.leave();
   * ```
   *
   * @param mode `GossipAuth.Off` (a standalone guard's default), `Transitional` or `Required`.
   * @param secrets At most two; the first signs, either verifies.
   * @returns This builder.
   * @throws {TypeError} when the mode or a secret is not one.
   * @throws {RangeError} when there are more than two secrets, or none for a mode that signs.
   */
  gossipAuth(mode: GossipAuthMode, secrets: readonly Secret[] = []): this {
    authConfig(mode, secrets);
    this.#options.gossipAuth = { mode, secrets: [...secrets] };
    return this;
  }

  /**
   * A salt for the hashes of keys, the same on every node: nobody without
   * it can craft a key that hashes like another's. Set or change it by
   * restarting every node at once, never by a rolling update (see docs/upgrading.md).
   * Keys hash under the first 16 bytes of the salt's SHA-256 (see
   * `saltHashKey`), computed in `spawn()`.
   *
   * @param bytes At least 16 bytes; copied.
   * @returns This builder.
   * @throws {TypeError} when `bytes` is not a `Uint8Array`.
   * @throws {RangeError} when it is shorter than 16 bytes.
   */
  keySalt(bytes: Uint8Array): this {
    this.#options.keySalt = checkSalt(bytes);
    return this;
  }

  /**
   * Builds the guard; with `bind`, binds its socket and starts gossip.
   *
   * @returns A promise of the running guard. It rejects with a `TypeError`
   *   when no limit was set, a `RangeError` when `trackedKeys` is below
   *   `hotKeys`, there are more classes than `maxClasses`, an unspecified
   *   address is bound with no `advertise`, or an address is bound with no
   *   `gossipAuth` said (a secret, or `GossipAuth.Off`), and an `Error` naming the
   *   address when the port cannot be bound.
   */
  async spawn(): Promise<Guard> {
    return guardOf(await assemble(resolveGuardOptions(this.#options)));
  }

  #number(name: NumericOption, n: number): this {
    this.#options[name] = checkOption(name, n);
    return this;
  }
}
