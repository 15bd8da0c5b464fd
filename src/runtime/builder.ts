/**
 * The guard's builder: every option with its default, validated with a
 * message that names the value.
 *
 * @module
 */

import { Enforcer } from "../core/enforcer.ts";
import { FleetNode } from "../core/fleet_node.ts";
import { type HashKey, PUBLIC_HASH_KEY } from "../core/hash.ts";
import { type AuthConfig, authConfig, type GossipAuthMode, type Secret } from "../core/auth.ts";
import { checkHotKeys, MAX_RECORDS_PER_GROUP } from "../core/allocation/report.ts";
import { MAX_MEMBERS_LIMIT, parseSeed } from "../core/membership/mod.ts";
import { Address } from "../proto/mod.ts";
import { GossipTask } from "./gossip.ts";
import { formatHostPort } from "./socket.ts";
import { RateguardError } from "../core/errors.ts";
import { describe, Limit } from "../core/limit.ts";
import { PartitionPolicy } from "../core/partition.ts";
import { checkMaxKeyBytes, DEFAULT_MAX_KEY_BYTES, LimitBook } from "../core/rules.ts";
import { checkSalt, saltHashKey } from "./salt.ts";
import { type Clock, monotonicClock } from "./clock.ts";
import type { Guard, GuardParts } from "./guard.ts";

/** The most keys an instance may track. */
export const MAX_TRACKED_KEYS = 1_048_576;
/** The most hot keys an instance coordinates. */
export const MAX_HOT_KEYS = 64;
// A node's demand report lists its whole hot set in one group: a hot set
// larger than a group holds could never be reported.
if (MAX_HOT_KEYS !== MAX_RECORDS_PER_GROUP) {
  throw new Error(
    `MAX_HOT_KEYS (${MAX_HOT_KEYS}) must equal MAX_RECORDS_PER_GROUP (${MAX_RECORDS_PER_GROUP})`,
  );
}
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
  #limit: Limit | undefined;
  #burst: number | undefined;
  #classes = new Map<string, Limit>();
  #dryRun = false;
  #trackedKeys = 4_096;
  #hotKeys = MAX_HOT_KEYS;
  #maxClasses = 64;
  #maxKeyLimits = 4_096;
  #policy = PartitionPolicy.holdDown();
  #bind: { host: string; port: number } | undefined;
  #advertise: Address | undefined;
  #seeds: string[] = [];
  #protocolPeriodMs = 200;
  #maxMembers = 8_192;
  #auth: AuthConfig = authConfig("off");
  #salt: Uint8Array<ArrayBuffer> | undefined;
  #maxKeyBytes = DEFAULT_MAX_KEY_BYTES;
  #mostDenied = 10;
  #clock: Clock = monotonicClock;
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
    this.#hotKeys = checkHotKeys(n);
    return this;
  }

  /**
   * The longest key (and class name) taken, in bytes of UTF-8: 1024 by
   * default, from 1 to 65,536. A longer one is a `RangeError` naming the
   * limit; so what a tracked key costs is bounded whatever clients send.
   */
  maxKeyBytes(n: number): this {
    this.#maxKeyBytes = checkMaxKeyBytes(n);
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
   * The UDP address to gossip on, as `ip:port` (`[v6]:port`); port 0 picks a
   * free one. Leave it out for a standalone guard. Binding `0.0.0.0` or `::`
   * needs {@link advertise}.
   */
  bind(address: string): this {
    const a = parseIpPort(address, "bind");
    this.#bind = { host: a.toString().replace(/:\d+$/, "").replace(/^\[|\]$/g, ""), port: a.port };
    return this;
  }

  /** Where the other instances reach this one, as `ip:port`; by default the bind address. */
  advertise(address: string): this {
    const a = parseIpPort(address, "advertise");
    if (a.port === 0 || isUnspecified(a)) {
      throw new RangeError(
        `advertise: needs a routable address and a port, got ${JSON.stringify(address)}`,
      );
    }
    this.#advertise = a;
    return this;
  }

  /**
   * Peers to join through, as `ip:port` or `host:port`; any live member will
   * do. Names are looked up again while the guard runs, so one name for the
   * whole fleet (a Kubernetes headless service) keeps up with it.
   */
  seeds(seeds: Iterable<string>): this {
    const list = [...seeds];
    for (const seed of list) {
      try {
        parseSeed(seed);
      } catch {
        throw new TypeError(`seeds: expected ip:port or host:port, got ${describe(seed)}`);
      }
    }
    this.#seeds = list;
    return this;
  }

  /** How often nodes exchange membership and demand, ms (default 200, from 10 to 60,000). */
  protocolPeriodMs(ms: number): this {
    this.#protocolPeriodMs = checkWhole(ms, "protocolPeriodMs", 10, 60_000);
    return this;
  }

  /** Members tracked at most, the dead not yet forgotten and itself included (8192, from 1 to 65,536). */
  maxMembers(n: number): this {
    this.#maxMembers = checkWhole(n, "maxMembers", 1, MAX_MEMBERS_LIMIT);
    return this;
  }

  /** How many keys `stats().mostDenied` and `mostShadowDenied` list: 10 by default, at most 1024, 0 for none. */
  mostDenied(k: number): this {
    this.#mostDenied = checkWhole(k, "mostDenied", 0, 1_024);
    return this;
  }

  /**
   * The clock the guard reads: a function returning monotonic milliseconds,
   * fractional or not, that never goes backwards. By default the runtime's
   * monotonic clock (`performance.now()`). Give one to drive a guard on
   * virtual time in tests and simulations, or to start it as if it had been
   * up for years. The guard counts time from the clock's reading at
   * `spawn()`, in whole microseconds.
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
   */
  clock(clock: () => number): this {
    if (typeof clock !== "function") {
      throw new TypeError(
        `clock: expected a function returning milliseconds, got ${describe(clock)}`,
      );
    }
    this.#clock = clock;
    return this;
  }

  /**
   * Signs the gossip: a mode (`GossipAuth.Off`, `Transitional`, `Required`)
   * and at most two secrets; the first signs, either verifies. See the
   * README's Security section.
   */
  gossipAuth(mode: GossipAuthMode, secrets: readonly Secret[] = []): this {
    this.#auth = authConfig(mode, secrets);
    return this;
  }

  /**
   * A salt of 16 bytes or more, the same on every node, for the hashes of
   * keys: nobody without it can craft a key that hashes like another's.
   * Set or change it by restarting every node at once, never by a rolling
   * update (see the README). Keys hash under the first 16 bytes of the
   * salt's SHA-256 (see `saltHashKey`), computed in `spawn()`.
   */
  keySalt(bytes: Uint8Array): this {
    this.#salt = checkSalt(bytes, "keySalt");
    return this;
  }

  /**
   * Builds the guard; with `bind`, binds its socket and starts gossip.
   * Rejects with a `TypeError` when no limit was set, a `RangeError` when
   * `trackedKeys` is below `hotKeys` or an unspecified address is bound
   * with no `advertise`, and an `Error` naming the address when the port
   * cannot be bound.
   */
  async spawn(): Promise<Guard> {
    const hashKey = this.#salt === undefined ? PUBLIC_HASH_KEY : await saltHashKey(this.#salt);
    const parts = this.#parts(hashKey);
    return this.#bind === undefined ? this.#make(parts) : await this.#spawnFleet(parts);
  }

  async #spawnFleet(parts: GuardParts): Promise<Guard> {
    const bind = this.#bind!;
    const { book, enforcer, clock } = parts;
    const membershipSeed = crypto.getRandomValues(new Uint32Array(1))[0];
    let node: FleetNode | undefined;
    const gossip = await GossipTask.start({
      bindHost: bind.host,
      bindPort: bind.port,
      clock,
      protocolPeriodMs: this.#protocolPeriodMs,
      makeNode: (port) =>
        node = new FleetNode({
          address: this.#advertise ?? parseIpPort(formatHostPort(bind.host, port), "bind"),
          seeds: this.#seeds,
          book,
          enforcer,
          policy: this.#policy,
          hotKeys: this.#hotKeys,
          membership: {
            seed: membershipSeed,
            protocolPeriodMs: this.#protocolPeriodMs,
            maxMembers: this.#maxMembers,
          },
        }),
      onDeath: () => node?.fail(clock()),
      auth: this.#auth,
    });
    return this.#make({ ...parts, gossip });
  }

  #parts(hashKey: HashKey): GuardParts {
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
      maxKeyBytes: this.#maxKeyBytes,
    });
    book.setClasses(this.#classes);
    if (
      this.#bind &&
      isUnspecified(parseIpPort(formatHostPort(this.#bind.host, this.#bind.port), "bind")) &&
      !this.#advertise
    ) {
      throw new RangeError(
        `bind ${formatHostPort(this.#bind.host, this.#bind.port)} listens on every address: ` +
          "set advertise(ip:port), where the other instances reach this one",
      );
    }
    const fleet = this.#bind ? { hashKey } : undefined;
    const clock = this.#clock;
    const originMs = clock();
    if (typeof originMs !== "number" || !Number.isFinite(originMs)) {
      throw new TypeError(`clock: it must return finite milliseconds, got ${describe(originMs)}`);
    }
    const enforcer = new Enforcer(book, {
      capacity: 2 * this.#trackedKeys,
      overflowScale: COLD_FRACTION,
      fleet,
      originMs,
    });
    enforcer.dryRun = this.#dryRun;
    return {
      book,
      enforcer,
      clock,
      partitionPolicy: this.#policy,
      auth: this.#auth,
      hashKey,
      mostDenied: this.#mostDenied,
    };
  }
}

function parseIpPort(text: string, what: string): Address {
  if (typeof text !== "string") {
    throw new TypeError(`${what}: expected ip:port, got ${describe(text)}`);
  }
  try {
    return Address.parse(text.trim());
  } catch {
    throw new TypeError(
      `${what}: expected an IP literal and a port, as 10.0.0.3:7946 or [fd00::3]:7946, got ${
        JSON.stringify(text)
      }`,
    );
  }
}

function isUnspecified(a: Address): boolean {
  return a.ip.every((b) => b === 0);
}

function checkWhole(n: number, what: string, min: number, max: number): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
    throw new RangeError(
      `${what}: expected a whole number from ${min} to ${max}, got ${describe(n)}`,
    );
  }
  return n;
}
