/**
 * The options of rateguard, in one place: the options of a single call
 * (which class, what cost), shared by the guard, the sidecar's client and
 * the middleware so that one can stand in for another; and every option of
 * a guard with its default and bounds, which the builder, the sidecar's
 * flags, `FleetNode` and the simulator all read from here. Checking them
 * as a whole is `option_checks.ts`'s; a number's bounds are checked here,
 * beside them. Sans I/O, so the core may import it.
 *
 * @module
 */

import type { GossipAuthMode, Secret } from "./auth.ts";
import { describe } from "./describe.ts";
import type { Limit } from "./limit.ts";
import { PartitionPolicy } from "./partition.ts";

/** Which class a key is in: the options of the calls that read one key. */
export interface KeyOptions {
  /**
   * The class; `""` is the default class, and a class this instance does
   * not know is held to the default limit (and counted in `stats()`).
   *
   * @default {""}
   */
  readonly class?: string;
}

/**
 * The class `options` names, `""` (the default class) when left out: how a
 * method about one key, `(key, ..., options)`, reads its class.
 *
 * @throws {TypeError} naming `what` when `options` is not an object: a class
 *   name where the options go is the class-first order of 0.2.0
 *   (`setKeyLimit(className, key, limit)`), refused rather than taken for
 *   the default class.
 */
export function classOf(options: KeyOptions | undefined, what: string): string {
  if (options === undefined) return "";
  if (typeof options !== "object" || options === null) {
    throw new TypeError(
      `${what}: the options are an object ({ class }), got ${
        describe(options)
      }; the key comes first`,
    );
  }
  return options.class ?? "";
}

/**
 * Options of a check: its class and its cost. The guard and the sidecar's
 * `Client` take the same shape, so one can stand in for the other.
 */
export interface CheckOptions extends KeyOptions {
  /**
   * What the request costs, a whole number from 1 to 4,294,967,295.
   *
   * @default {1}
   */
  readonly cost?: number;
}

/** One check of an all-or-nothing batch: a key, with its class and cost. */
export interface BatchItem extends CheckOptions {
  /** The key, a non-empty string. */
  readonly key: string;
}

/** A numeric option's default and the least and most it takes. */
export interface OptionBounds {
  /** What it is when left out. */
  readonly default: number;
  /** The least it takes. */
  readonly min: number;
  /** The most it takes. */
  readonly max: number;
}

/**
 * Every numeric option of a guard with its default and bounds: the one
 * source of them for the builder, the sidecar's flags, `FleetNode` and the
 * simulator. {@link GuardOptions} documents each.
 */
export const GUARD_BOUNDS = {
  trackedKeys: { default: 4_096, min: 1, max: 1_048_576 },
  hotKeys: { default: 64, min: 1, max: 64 },
  maxClasses: { default: 64, min: 0, max: 4_096 },
  maxKeyLimits: { default: 4_096, min: 0, max: 1_048_576 },
  protocolPeriodMs: { default: 200, min: 10, max: 60_000 },
  maxMembers: { default: 8_192, min: 1, max: 65_536 },
  mostDenied: { default: 10, min: 0, max: 1_024 },
  maxKeyBytes: { default: 1_024, min: 1, max: 65_536 },
  maxBlocks: { default: 1_024, min: 1, max: 65_536 },
} as const satisfies Record<string, OptionBounds>;

/**
 * The sidecar's HTTP server, bounded against slow and idle clients: how
 * long a client may take over its headers, over its whole request (the
 * body included), how long a kept-alive connection may sit idle, and how
 * many connections are open at once (from one client address too), and how long a shutdown waits for
 * requests in flight before it closes their connections. The one source of the server's
 * defaults and of its flags' bounds.
 */
export const HTTP_BOUNDS = {
  headersTimeoutMs: { default: 10_000, min: 100, max: 600_000 },
  requestTimeoutMs: { default: 30_000, min: 100, max: 3_600_000 },
  idleTimeoutMs: { default: 5_000, min: 100, max: 600_000 },
  maxConnections: { default: 1_024, min: 1, max: 65_536 },
  // A quarter of the default cap: one address cannot hold most of it.
  maxConnectionsPerClient: { default: 256, min: 1, max: 65_536 },
  drainTimeoutMs: { default: 10_000, min: 0, max: 600_000 },
} as const satisfies Record<string, OptionBounds>;

/**
 * How long a leave waits, at most, for its goodbyes to be handed to the
 * system before it closes the socket. Closing at once drops them on Deno
 * and Node, and the peers then take the leaver for crashed; waiting with
 * no bound would let a stuck network hold a shutdown up. Fixed, not an
 * option: it bounds how long `leave()` takes, whatever the fleet.
 */
export const LEAVE_WAIT_MS = 500;

/**
 * The cold fraction α: a key nobody coordinates runs at α times its fair
 * share R/N, and keys with no place in the table share one allowance at
 * that rate. Fixed, not an option: the accuracy table is measured with it.
 */
export const COLD_FRACTION = 0.5;

/**
 * The floor fraction β: every live member keeps R·β/N of a hot key, and a
 * held member (joining, without quorum) holds every key there.
 */
export const FLOOR_FRACTION = 0.05;

// The floor sits below the cold share, or a member held at the floor would
// admit more than one running free; checked when the module loads.
if (!(FLOOR_FRACTION > 0 && FLOOR_FRACTION < COLD_FRACTION && COLD_FRACTION <= 1)) {
  throw new Error("options: need 0 < FLOOR_FRACTION < COLD_FRACTION <= 1");
}

/** The partition policy of a guard that sets none: hold a lost member's share for ten seconds. */
export const DEFAULT_PARTITION_POLICY: PartitionPolicy = PartitionPolicy.holdDown();

/** The name of a numeric option. */
export type NumericOption = keyof typeof GUARD_BOUNDS;

/**
 * Checks a numeric option against its bounds.
 *
 * @param name The option, named in the error.
 * @param value What the caller gave.
 * @returns The value, a whole number within the bounds.
 * @throws {TypeError} when `value` is not a number.
 * @throws {RangeError} when it is not a whole number within the bounds.
 */
export function checkOption(name: NumericOption, value: unknown): number {
  return checkBounded(name, GUARD_BOUNDS[name], value);
}

/**
 * Checks a number against bounds, such as those of {@link HTTP_BOUNDS}.
 *
 * @param name What the number is, named in the error.
 * @param bounds The least and most it takes.
 * @param value What the caller gave.
 * @returns The value, a whole number within the bounds.
 * @throws {TypeError} when `value` is not a number.
 * @throws {RangeError} when it is not a whole number within the bounds.
 */
export function checkBounded(name: string, bounds: OptionBounds, value: unknown): number {
  const { min, max } = bounds;
  if (typeof value !== "number") {
    throw new TypeError(
      `${name}: expected a whole number from ${min} to ${max}, got ${describe(value)}`,
    );
  }
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name}: expected a whole number from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/**
 * Every option of a guard, with its default and its bounds. The builder
 * ({@link https://jsr.io/@rateguard/guard/doc/~/GuardBuilder | GuardBuilder})
 * fills one, a method per field, and `spawn()` checks it as a whole; the
 * numeric defaults and bounds are {@link GUARD_BOUNDS}.
 */
export interface GuardOptions {
  /**
   * The default class's limit, per key across the fleet.
   *
   * @default {none: required before spawn()}
   */
  readonly limit?: Limit;
  /**
   * The default class's burst: requests one instance admits back to back on
   * top of its share; 0 is taken as 1, at most 4,194,303.
   *
   * @default {the limit's own burst (a twentieth of its rate a second, at least 1)}
   */
  readonly burst?: number;
  /**
   * Named classes and their limits.
   *
   * @default {none}
   */
  readonly classes?: ReadonlyMap<string, Limit>;
  /**
   * Admit every request and count those that would be denied.
   *
   * @default {false}
   */
  readonly dryRun?: boolean;
  /**
   * Share rule changes with the fleet: a class, key limit, shadow, default
   * limit or dry run set or removed on any instance through the admin API
   * applies on every instance that also has this on, by gossip (see
   * docs/fleet-rules.md). Off, every instance keeps the rules it is given.
   *
   * @default {false}
   */
  readonly fleetRules?: boolean;
  /**
   * Share the burst with the fleet: each instance's burst follows its share
   * of the limit (the burst times share/limit, in whole requests, never
   * below one and a half), so that the fleet as a whole admits at most the
   * limit plus one burst when traffic starts or jumps, rather than a burst
   * on every instance (past burst/1.5 instances, each holds that least). The trade: a client that bursts against one instance of a
   * big fleet gets that instance's part of the burst there, not the whole
   * of it. A standalone guard's share is the whole limit, so its burst is
   * unchanged. See docs/getting-started.md, "A burst shared by the fleet".
   *
   * Unset, it follows the fleet's size, limit by limit: shared once a burst
   * on each counted instance would add up to more than half the limit's
   * second (the headroom the cold fraction leaves: n × burst > (1 − α) ×
   * rate × 1 s), a burst on each below that. At the default burst (a
   * twentieth of the count) that is more than ten instances for a limit a
   * second, and any fleet for a limit a minute. `true` shares it at any
   * size, `false` gives a burst on each instance at any size (what 0.2
   * did, and the specification's).
   *
   * @default {undefined} (follows the fleet's size)
   */
  readonly sharedBurst?: boolean;
  /**
   * Keys kept with state at once, from `hotKeys` to 1,048,576; the table
   * holds twice as many.
   *
   * @default {4096}
   */
  readonly trackedKeys?: number;
  /**
   * Keys coordinated with the peers at once, 1 to 64.
   *
   * @default {64}
   */
  readonly hotKeys?: number;
  /**
   * Named classes kept at most, 0 to 4,096.
   *
   * @default {64}
   */
  readonly maxClasses?: number;
  /**
   * Key limits kept at most, 0 to 1,048,576.
   *
   * @default {4096}
   */
  readonly maxKeyLimits?: number;
  /**
   * Keys blocked at once (`guard.block`, and with `fleetRules` the fleet's
   * blocks), 1 to 65,536. Blocks live in a set of their own, never in the
   * key table, so however many are made, check traffic keeps every place
   * of the table; when the set is full, a new block ends the one nearest
   * its end (counted in `stats().blocksEvicted`).
   *
   * @default {1024}
   */
  readonly maxBlocks?: number;
  /**
   * What to do when the cluster may be split; takes effect once the guard gossips.
   *
   * @default {PartitionPolicy.holdDown(10_000)}
   */
  readonly partitionPolicy?: PartitionPolicy;
  /**
   * The UDP address to gossip on, `ip:port` or `[v6]:port`; port 0 picks a
   * free one. Binding `0.0.0.0` or `::` needs `advertise`.
   *
   * @default {none: a standalone guard, with no gossip}
   */
  readonly bind?: string;
  /**
   * Where the other instances reach this one, `ip:port`.
   *
   * @default {the bind address}
   */
  readonly advertise?: string;
  /**
   * Peers to join through, `ip:port` or `host:port`; names are looked up
   * again while the guard runs.
   *
   * @default {[]}
   */
  readonly seeds?: readonly string[];
  /**
   * How often nodes exchange membership and demand, ms, 10 to 60,000.
   *
   * @default {200}
   */
  readonly protocolPeriodMs?: number;
  /**
   * Members tracked at most, the dead not yet forgotten and itself
   * included, 1 to 65,536.
   *
   * @default {8192}
   */
  readonly maxMembers?: number;
  /**
   * How many keys `stats().mostDenied` and `mostShadowDenied` list, 0 to 1,024.
   *
   * @default {10}
   */
  readonly mostDenied?: number;
  /**
   * The longest key or class name taken, in bytes of UTF-8, 1 to 65,536; a
   * longer one is a `RangeError` (the sidecar: a 400).
   *
   * @default {1024}
   */
  readonly maxKeyBytes?: number;
  /**
   * The clock the guard reads: monotonic milliseconds, for tests and
   * simulations on virtual time; the guard counts from its reading at spawn.
   *
   * @default {the runtime's monotonic clock, performance.now()}
   */
  readonly clock?: () => number;
  /**
   * How gossip is signed: a mode and at most two secrets, the first signs
   * and either verifies. A guard with `bind` has no default: it needs a
   * mode said, a secret to sign with or `Off` for a network trusted as it
   * is, and `spawn()` refuses it without (a `RangeError` naming both).
   *
   * @default {{ mode: "off", secrets: [] } standalone; none with bind}
   */
  readonly gossipAuth?: { readonly mode: GossipAuthMode; readonly secrets: readonly Secret[] };
  /**
   * A salt of at least 16 bytes, the same on every node, for the key hashes.
   *
   * @default {none: the public hash key}
   */
  readonly keySalt?: Uint8Array;
}
