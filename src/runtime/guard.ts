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
import { GuardBuilder } from "./builder.ts";

/** Options of a single check. */
export interface CheckOptions {
  /** What the request costs, a whole number ≥ 1; 1 when left out. */
  readonly cost?: number;
}

/** What one instance decided, and how it is set up. */
export interface Stats {
  /** Checks admitted since the guard started. */
  readonly admitted: number;
  /** Checks denied; in a dry run, those that would have been. */
  readonly denied: number;
  /** Checks of keys with no place in the key table (raise `trackedKeys` if it grows). */
  readonly overflowed: number;
  /** Checks in a class this instance does not know, held to the default limit. */
  readonly unknownClass: number;
  /** Checks a shadow limit would have denied. */
  readonly shadowDenied: number;
  /** Keys holding state now. */
  readonly trackedKeys: number;
  /** Whether every check is admitted and would-be denials only counted. */
  readonly dryRun: boolean;
  /** Whether the guard runs (false once it has left). */
  readonly running: boolean;
  /** Members seen, this instance included: 1 for a standalone guard. */
  readonly clusterSize: number;
  /** N, the members the limit is shared over: 1 for a standalone guard. */
  readonly countedSize: number;
  /** Members not heard from lately. */
  readonly suspects: number;
  /** No peer reached yet: every key held at the floor. */
  readonly joining: boolean;
  /** Peers have not yet heard this instance's demand: every key held at the floor. */
  readonly learning: boolean;
  /** Under Quorum, no majority in sight: every key held at the floor. */
  readonly withoutQuorum: boolean;
  /** A newcomer was refused for a full member table lately: every key held at the floor. */
  readonly membersFull: boolean;
  /** Keys coordinated with the peers. */
  readonly hotKeys: number;
  /** Milliseconds since the last gossip round; far over the protocol period, the background task is stuck. */
  readonly sinceLastRoundMs: number;
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
}

/**
 * One rate limit per key, decided locally. Build one with
 * {@link Guard.builder}; share it across the whole process.
 *
 * @example
 * ```ts
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
 * console.assert(guard.checkIn("pro", "tenant:42").allowed);
 * await guard.leave();
 * ```
 */
export class Guard {
  readonly #book: LimitBook;
  readonly #enforcer: Enforcer;
  readonly #clock: Clock;
  readonly #policy: PartitionPolicy;
  readonly #gossip: GossipTask | undefined;
  #running = true;

  /** Use {@link Guard.builder}. */
  constructor(parts: GuardParts) {
    this.#book = parts.book;
    this.#enforcer = parts.enforcer;
    this.#clock = parts.clock;
    this.#policy = parts.partitionPolicy;
    this.#gossip = parts.gossip;
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

  /** The partition policy this guard applies once it gossips. */
  partitionPolicy(): PartitionPolicy {
    return this.#policy;
  }

  /** What this instance has decided so far, and how it sees the cluster. */
  stats(): Stats {
    const c = this.#enforcer.counters;
    if (this.#gossip !== undefined) {
      const f = this.#gossip.node.stats(this.#clock());
      return {
        admitted: c.admitted,
        denied: c.denied,
        overflowed: c.overflowed,
        unknownClass: c.unknownClass,
        shadowDenied: c.shadowDenied,
        trackedKeys: this.#enforcer.table.size,
        dryRun: this.#enforcer.dryRun,
        running: this.#gossip.running,
        clusterSize: f.clusterSize,
        countedSize: f.countedSize,
        suspects: f.suspects,
        joining: f.joining,
        learning: f.learning,
        withoutQuorum: f.withoutQuorum,
        membersFull: f.membersFull,
        hotKeys: f.hotKeys,
        sinceLastRoundMs: f.sinceLastRoundMs,
      };
    }
    return {
      admitted: c.admitted,
      denied: c.denied,
      overflowed: c.overflowed,
      unknownClass: c.unknownClass,
      shadowDenied: c.shadowDenied,
      trackedKeys: this.#enforcer.table.size,
      dryRun: this.#enforcer.dryRun,
      running: this.#running,
      // A standalone guard is a fleet of one that needs no rounds.
      clusterSize: 1,
      countedSize: 1,
      suspects: 0,
      joining: false,
      learning: false,
      withoutQuorum: false,
      membersFull: false,
      hotKeys: 0,
      sinceLastRoundMs: 0,
    };
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
