/**
 * The guard's builder: every option with its default, validated with a
 * message that names the value.
 *
 * @module
 */

import { Enforcer } from "../core/enforcer.ts";
import { RateguardError } from "../core/errors.ts";
import { describe, Limit } from "../core/limit.ts";
import { PartitionPolicy } from "../core/partition.ts";
import { LimitBook } from "../core/rules.ts";
import { monotonicClock } from "./clock.ts";
import type { Guard, GuardParts } from "./guard.ts";

/** The most keys an instance may track. */
export const MAX_TRACKED_KEYS = 1_048_576;
/** The most hot keys an instance coordinates. */
export const MAX_HOT_KEYS = 64;
/** The most named classes an instance may keep. */
export const MAX_CLASSES = 4_096;
/** The most key limits an instance may keep. */
export const MAX_KEY_LIMITS = 1_048_576;
/**
 * The cold fraction α: a key without coordination runs at α times its fair
 * share. Keys with no place in the table share one allowance at that rate.
 */
export const COLD_FRACTION = 0.5;

/**
 * Builds a {@link Guard}. Only a limit is required; without `bind` the
 * guard is standalone: it enforces each key locally, with no gossip.
 *
 * @example
 * ```ts
 * import { Guard, Limit, PartitionPolicy } from "@rateguard/guard";
 *
 * const guard = await Guard.builder()
 *   .defaultLimit(Limit.perMinute(1_000))
 *   .burst(20)
 *   .class("free", Limit.perSecond(10))
 *   .trackedKeys(8_192)
 *   .partitionPolicy(PartitionPolicy.holdDown(30_000))
 *   .spawn();
 * console.assert(guard.stats().trackedKeys === 0);
 * ```
 */
export class GuardBuilder {
  #limit: Limit | undefined;
  #burst: number | undefined;
  #classes = new Map<string, Limit>();
  #dryRun = false;
  #trackedKeys = 4_096;
  #hotKeys = MAX_HOT_KEYS;
  #maxClasses = 64;
  #maxKeyLimits = 4_096;
  #policy = PartitionPolicy.holdDown();
  readonly #make: (parts: GuardParts) => Guard;

  /** Use `Guard.builder()`. */
  constructor(make: (parts: GuardParts) => Guard) {
    this.#make = make;
  }

  /** The default class's limit in requests per second, across the fleet. */
  limit(perSec: number): this {
    this.#limit = Limit.perSecond(perSec);
    return this;
  }

  /** The default class's limit as any {@link Limit}, per second, minute or hour. */
  defaultLimit(limit: Limit): this {
    if (!(limit instanceof Limit)) {
      throw new TypeError(`defaultLimit: expected a Limit, got ${describe(limit)}`);
    }
    this.#limit = limit;
    return this;
  }

  /**
   * The default class's burst: requests one instance admits back to back on
   * top of its share. 0 is taken as 1; at most 4,194,303.
   */
  burst(size: number): this {
    Limit.perSecond(1).burst(size); // validates with the Limit's own message
    this.#burst = size;
    return this;
  }

  /** A class of limits; check its keys with `checkIn(name, key)`. */
  class(name: string, limit: Limit): this {
    if (typeof name !== "string" || name === "") {
      throw new TypeError(`class: the name must be a non-empty string, got ${describe(name)}`);
    }
    if (!(limit instanceof Limit)) {
      throw new TypeError(
        `class(${JSON.stringify(name)}): expected a Limit, got ${describe(limit)}`,
      );
    }
    this.#classes.set(name, limit);
    return this;
  }

  /** Admit every request and count those that would be denied. */
  dryRun(on: boolean): this {
    if (typeof on !== "boolean") {
      throw new TypeError(`dryRun: expected a boolean, got ${describe(on)}`);
    }
    this.#dryRun = on;
    return this;
  }

  /** Keys kept with state at once: at least `hotKeys`, at most 1,048,576; the table holds twice as many. */
  trackedKeys(n: number): this {
    this.#trackedKeys = checkWhole(n, "trackedKeys", 1, MAX_TRACKED_KEYS);
    return this;
  }

  /** Keys coordinated with the peers at once, 1 to 64. */
  hotKeys(n: number): this {
    this.#hotKeys = checkWhole(n, "hotKeys", 1, MAX_HOT_KEYS);
    return this;
  }

  /** Named classes kept at most, up to 4096 (default 64). */
  maxClasses(n: number): this {
    this.#maxClasses = checkWhole(n, "maxClasses", 0, MAX_CLASSES);
    return this;
  }

  /** Key limits kept at most, up to 1,048,576 (default 4096). */
  maxKeyLimits(n: number): this {
    if (typeof n === "number" && Number.isInteger(n) && n > MAX_KEY_LIMITS) {
      throw new RateguardError(
        "TooLargeMaxKeyLimits",
        `maxKeyLimits: at most ${MAX_KEY_LIMITS}, got ${n}`,
      );
    }
    this.#maxKeyLimits = checkWhole(n, "maxKeyLimits", 0, MAX_KEY_LIMITS);
    return this;
  }

  /**
   * What to do when the cluster may be split: a {@link PartitionPolicy} or
   * its text (`optimistic`, `quorum`, `holddown:10s`). Default: hold down
   * for ten seconds. Takes effect once the guard gossips.
   */
  partitionPolicy(policy: PartitionPolicy | string): this {
    if (typeof policy === "string") this.#policy = PartitionPolicy.parse(policy);
    else if (policy instanceof PartitionPolicy) this.#policy = policy;
    else {throw new TypeError(
        `partitionPolicy: expected a PartitionPolicy or its name, got ${describe(policy)}`,
      );}
    return this;
  }

  /**
   * Builds the guard. Rejects with a `TypeError` when no limit was set, and a
   * `RangeError` when `trackedKeys` is below `hotKeys`.
   */
  spawn(): Promise<Guard> {
    try {
      return Promise.resolve(this.#build());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #build(): Guard {
    if (this.#limit === undefined) {
      throw new TypeError(
        "Guard.builder(): set a limit with .limit(perSec) or .defaultLimit(limit) before spawn()",
      );
    }
    if (this.#trackedKeys < this.#hotKeys) {
      throw new RangeError(
        `trackedKeys (${this.#trackedKeys}) must be at least hotKeys (${this.#hotKeys})`,
      );
    }
    if (this.#classes.size > this.#maxClasses) {
      throw new RateguardError(
        "TooManyClasses",
        `${this.#classes.size} classes, more than maxClasses (${this.#maxClasses})`,
      );
    }
    const limit = this.#burst === undefined ? this.#limit : this.#limit.burst(this.#burst);
    const book = new LimitBook(limit, {
      maxClasses: this.#maxClasses,
      maxKeyLimits: this.#maxKeyLimits,
    });
    book.setClasses(this.#classes);
    const enforcer = new Enforcer(book, {
      capacity: 2 * this.#trackedKeys,
      overflowScale: COLD_FRACTION,
    });
    enforcer.dryRun = this.#dryRun;
    return this.#make({ book, enforcer, clock: monotonicClock, partitionPolicy: this.#policy });
  }
}

function checkWhole(n: number, what: string, min: number, max: number): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
    throw new RangeError(
      `${what}: expected a whole number from ${min} to ${max}, got ${describe(n)}`,
    );
  }
  return n;
}
