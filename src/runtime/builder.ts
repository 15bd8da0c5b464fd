/**
 * The guard's builder: a method per option of {@link GuardOptions}, each
 * checked where it is set with a message naming the value, and the whole
 * checked once more by `resolveGuardOptions` when the guard is spawned;
 * `assemble.ts` then makes the guard's parts from them.
 *
 * @module
 */

import { authConfig, type GossipAuthMode, type Secret } from "../core/auth.ts";
import { checkLimit, Limit } from "../core/limit.ts";
import type { PartitionPolicy } from "../core/partition.ts";
import { checkOption, type GuardOptions, type NumericOption } from "../core/options.ts";
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
import type { Guard } from "./guard.ts";
import { makers } from "./parts.ts";
import { assemble } from "./assemble.ts";

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
    makers.builder = () => new GuardBuilder();
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
   *
   * @param on Whether bursts follow shares (default false).
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
   * trusted. A standalone guard needs none. See the README's Security section.
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
   * restarting every node at once, never by a rolling update (see the README).
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
    return await assemble(resolveGuardOptions(this.#options));
  }

  #number(name: NumericOption, n: number): this {
    this.#options[name] = checkOption(name, n);
    return this;
  }
}
