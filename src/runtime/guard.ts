/**
 * The guard: what a service holds to decide requests. Every check is a
 * plain synchronous call that reads the monotonic clock and decides from
 * memory.
 *
 * @module
 */

import type { BatchDecision, BatchItem, Enforcer, Traced } from "../core/enforcer.ts";
import type { Decision } from "../core/gcra.ts";
import type { KeyLimit, Limit } from "../core/limit.ts";
import type { ClassEntry, KeyLimitEntry, LimitBook, ShadowEntry } from "../core/rules.ts";
import type { PartitionPolicy } from "../core/partition.ts";
import type { Clock } from "./clock.ts";
import type { GossipCounters, GossipTask } from "./gossip.ts";
import { collectStats, type Stats } from "./stats.ts";
import { type KeyStats, keyStatsOf, mostDenied } from "./keystats.ts";
import { type AuthConfig, authConfig, type GossipAuthMode, type Secret } from "../core/auth.ts";
import { type HashKey, keyHash } from "../core/hash.ts";
import { GuardBuilder } from "./builder.ts";

/** Options of a single check. */
export interface CheckOptions {
  /** What the request costs, a whole number ≥ 1; 1 when left out. */
  readonly cost?: number;
}

/** What the builder hands the guard. */
export interface GuardParts {
  /** The limits. */
  readonly book: LimitBook;
  /** The request path. */
  readonly enforcer: Enforcer;
  /** The monotonic clock. */
  readonly clock: Clock;
  /** The partition policy, applied once the guard gossips. */
  readonly partitionPolicy: PartitionPolicy;
  /** The background task, for a guard in a fleet; none for a standalone guard. */
  readonly gossip?: GossipTask;
  /** How gossip is signed. */
  readonly auth: AuthConfig;
  /** How long `stats().mostDenied` is. */
  readonly mostDenied: number;
  /** The key of the 64-bit key hashes: the salt's, or the public one. */
  readonly hashKey: HashKey;
}

/**
 * One rate limit per key, decided locally. Build one with
 * {@link Guard.builder}; share it across the whole process.
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
 * assert(guard.checkIn("pro", "tenant:42").allowed);
 * await guard.leave();
 * ```
 */
export class Guard {
  readonly #book: LimitBook;
  readonly #enforcer: Enforcer;
  readonly #clock: Clock;
  readonly #policy: PartitionPolicy;
  readonly #gossip: GossipTask | undefined;
  readonly #hashKey: HashKey;
  readonly #mostDenied: number;
  #auth: AuthConfig;
  #running = true;

  /** Use {@link Guard.builder}. */
  constructor(parts: GuardParts) {
    this.#book = parts.book;
    this.#enforcer = parts.enforcer;
    this.#clock = parts.clock;
    this.#policy = parts.partitionPolicy;
    this.#gossip = parts.gossip;
    this.#auth = parts.auth;
    this.#hashKey = parts.hashKey;
    this.#mostDenied = parts.mostDenied;
  }

  /** A builder with the defaults; see {@link GuardBuilder}. */
  static builder(): GuardBuilder {
    return new GuardBuilder((parts) => new Guard(parts));
  }

  /** Checks a request for `key` in the default class, consuming it if admitted. */
  check(key: string, options?: CheckOptions): Decision {
    return this.#enforcer.check(
      "",
      key,
      options === undefined ? 1 : options.cost ?? 1,
      this.#clock(),
    );
  }

  /** Checks a request for `key` in class `className`. */
  checkIn(className: string, key: string, options?: CheckOptions): Decision {
    return this.#enforcer.check(
      className,
      key,
      options === undefined ? 1 : options.cost ?? 1,
      this.#clock(),
    );
  }

  /** As {@link check}, with what the shadow limit would have decided. */
  checkTraced(key: string, options?: CheckOptions): Traced {
    return this.#enforcer.checkTraced("", key, options?.cost ?? 1, this.#clock());
  }

  /** As {@link checkIn}, with what the shadow limit would have decided. */
  checkInTraced(className: string, key: string, options?: CheckOptions): Traced {
    return this.#enforcer.checkTraced(className, key, options?.cost ?? 1, this.#clock());
  }

  /**
   * Checks several keys at once, all or nothing: admitted only if every
   * item is, and a denied batch consumes nothing.
   *
   * @throws {TypeError} when the same class and key appear twice.
   */
  checkAll(items: readonly BatchItem[]): BatchDecision {
    return this.#enforcer.checkAll(items, this.#clock());
  }

  /** What the next check of `key` would say; consumes nothing. */
  peek(key: string): Decision {
    return this.#enforcer.peek("", key, this.#clock());
  }

  /** What the next check of `key` in a class would say; consumes nothing. */
  peekIn(className: string, key: string): Decision {
    return this.#enforcer.peek(className, key, this.#clock());
  }

  /** Sets the default class's limit. Keys keep their state: no fresh burst. */
  setLimit(limit: Limit): void {
    this.#book.setLimit(limit);
  }

  /** Adds or changes a class. */
  setClass(name: string, limit: Limit): void {
    this.#book.setClass(name, limit);
  }

  /** Removes a class; its keys fall back to the default limit. */
  removeClass(name: string): boolean {
    return this.#book.removeClass(name);
  }

  /** Replaces all named classes at once, or none if one is refused. */
  setClasses(entries: Iterable<ClassEntry>): void {
    this.#book.setClasses(entries);
  }

  /**
   * The limit a key of a class is held to across the fleet: its own, its
   * class's, or the default one for a class this instance does not know.
   */
  limitIn(className: string, key: string): Limit {
    this.#book.checkKey(className, key, "limitIn");
    return this.#book.resolve(className, key).limit;
  }

  /** The named classes with their limits. */
  classes(): ClassEntry[] {
    return this.#book.classes();
  }

  /** Gives one key its own limit, or the limit of a class ({@link KeyLimit.class}). */
  setKeyLimit(className: string, key: string, limit: Limit | KeyLimit): void {
    this.#book.setKeyLimit(className, key, limit);
  }

  /** Removes a key's own limit. */
  removeKeyLimit(className: string, key: string): boolean {
    return this.#book.removeKeyLimit(className, key);
  }

  /** Replaces every key limit, or none if one is refused. */
  setKeyLimits(entries: Iterable<KeyLimitEntry>): void {
    this.#book.setKeyLimits(entries);
  }

  /** Every key limit, as `[className, key, limit]`. */
  keyLimits(): KeyLimitEntry[] {
    return this.#book.keyLimits();
  }

  /** Gives a class (`""`: the default) a shadow limit, or removes it with `null`. */
  setShadow(className: string, limit: Limit | null): void {
    this.#book.setShadow(className, limit);
  }

  /** Every shadow, as `[className, limit]`. */
  shadows(): ShadowEntry[] {
    return this.#book.shadows();
  }

  /** Replaces every shadow, or none if one names an unknown class. */
  setShadows(entries: Iterable<ShadowEntry>): void {
    this.#book.setShadows(entries);
  }

  /** Turns the dry run on (admit all, count would-be denials) or off. */
  setDryRun(on: boolean): void {
    if (typeof on !== "boolean") {
      throw new TypeError(`setDryRun: expected a boolean, got ${typeof on}`);
    }
    this.#enforcer.dryRun = on;
  }

  /**
   * Takes a step of a signing rollout, or of a rotation, with no restart:
   * the mode and at most two secrets, the first signs and either verifies.
   * See the README's Security section for the order of the steps.
   */
  setGossipAuth(mode: GossipAuthMode, secrets: readonly Secret[] = []): void {
    this.#auth = authConfig(mode, secrets);
    this.#gossip?.setAuth(this.#auth);
  }

  /**
   * The 64-bit hash a key of a class travels under, and is named by in
   * `stats().mostDenied`: keyed by this guard's salt when it has one.
   */
  keyHashIn(className: string, key: string): bigint {
    this.#book.checkKey(className, key, "keyHashIn");
    return keyHash(this.#hashKey, className, key);
  }

  /** The longest key or class name this guard takes, in bytes of UTF-8 (`maxKeyBytes`). */
  maxKeyBytes(): number {
    return this.#book.maxKeyBytes;
  }

  /** The partition policy this guard applies once it gossips. */
  partitionPolicy(): PartitionPolicy {
    return this.#policy;
  }

  /** What this instance has decided so far, and how it sees the cluster. */
  stats(): Stats {
    return collectStats({
      enforcer: this.#enforcer,
      fleet: this.#gossip?.node.stats(this.#clock()),
      gossip: this.#gossip?.counters(),
      running: this.isRunning(),
      gossipAuth: this.#gossip?.auth.mode ?? this.#auth.mode,
      most: mostDenied(this.#enforcer, {
        k: this.#mostDenied,
        nowMs: this.#clock(),
        hashKey: this.#hashKey,
      }),
    });
  }

  /**
   * How one key fares here, over the last ten seconds or so: requests,
   * denials and shadow denials a second, its share, its limit and shadow.
   * `undefined` when this instance keeps no state for the key; asking does
   * not make any.
   */
  keyStats(className: string, key: string): Promise<KeyStats | undefined> {
    try {
      this.#book.checkKey(className, key, "keyStats");
      return Promise.resolve(
        keyStatsOf({ enforcer: this.#enforcer, book: this.#book }, className, key, this.#clock()),
      );
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The rate `key` is admitted at here now, per second: its share, before the burst. */
  share(key: string): number {
    return this.#enforcer.currentRate("", key);
  }

  /** As {@link share}, for a key of a class. */
  shareIn(className: string, key: string): number {
    return this.#enforcer.currentRate(className, key);
  }

  /**
   * Whether the guard still runs: false once it has left, or if its
   * background task died (a bug; the guard then holds every key at the floor).
   */
  isRunning(): boolean {
    return this.#gossip ? this.#gossip.running : this.#running;
  }

  /** Members this instance sees, itself included: 1 for a standalone guard. */
  clusterSize(): number {
    return this.#gossip ? this.#gossip.node.stats(this.#clock()).clusterSize : 1;
  }

  /**
   * What the background task sent and received, and the socket errors it
   * survived; undefined for a standalone guard.
   */
  traffic(): GossipCounters | undefined {
    return this.#gossip?.counters();
  }

  /** Where the other instances reach this one, as `ip:port`; undefined for a standalone guard. */
  address(): string | undefined {
    return this.#gossip?.node.address.toString();
  }

  /**
   * Tells the peers this instance is going (they take its share within a
   * round), then stops its timer and closes its socket. Checks still work
   * afterwards, every key at the floor, which the peers no longer count.
   */
  async leave(): Promise<void> {
    this.#running = false;
    if (this.#gossip === undefined) return;
    this.#gossip.node.fail(this.#clock());
    await this.#gossip.leave();
  }

  /** `await using guard = ...` leaves when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.leave();
  }
}
