/**
 * Checking a guard's options: each option on its own, as the builder's
 * methods and the sidecar's flags take them, and all of them together at
 * `spawn()`, where {@link resolveGuardOptions} fills in the defaults and
 * refuses options that disagree. What the options are, with their defaults
 * and bounds, is `options.ts`; this module is the one place they are
 * validated. Sans I/O, so the core may import it.
 *
 * @module
 */

import { type AuthConfig, authConfig, MIN_SALT_BYTES } from "./auth.ts";
import { describe } from "./describe.ts";
import { checkLimit, type Limit } from "./limit.ts";
import { PartitionPolicy } from "./partition.ts";
import { Address } from "../proto/mod.ts";
import { parseSeed } from "./membership/seeds.ts";
import {
  checkOption,
  DEFAULT_PARTITION_POLICY,
  GUARD_BOUNDS,
  type GuardOptions,
  type NumericOption,
} from "./options.ts";

/** Guard options with every default filled in and every value checked. */
export interface ResolvedGuardOptions {
  /** The default limit, with its burst. */
  readonly limit: Limit;
  /** Named classes. */
  readonly classes: ReadonlyMap<string, Limit>;
  /** Whether the guard runs dry. */
  readonly dryRun: boolean;
  /** Whether rule changes are shared with the fleet. */
  readonly fleetRules: boolean;
  /** Whether each instance's burst follows its share; undefined: as the fleet's size says. */
  readonly sharedBurst: boolean | undefined;
  /** The numeric options. */
  readonly trackedKeys: number;
  /** See {@link GuardOptions.hotKeys}. */
  readonly hotKeys: number;
  /** See {@link GuardOptions.maxClasses}. */
  readonly maxClasses: number;
  /** See {@link GuardOptions.maxKeyLimits}. */
  readonly maxKeyLimits: number;
  /** See {@link GuardOptions.protocolPeriodMs}. */
  readonly protocolPeriodMs: number;
  /** See {@link GuardOptions.maxMembers}. */
  readonly maxMembers: number;
  /** See {@link GuardOptions.mostDenied}. */
  readonly mostDenied: number;
  /** See {@link GuardOptions.maxKeyBytes}. */
  readonly maxKeyBytes: number;
  /** See {@link GuardOptions.maxBlocks}. */
  readonly maxBlocks: number;
  /** The partition policy. */
  readonly partitionPolicy: PartitionPolicy;
  /** Where to gossip, when the guard is in a fleet. */
  readonly bind?: Address;
  /** Where the others reach it (the bind address unless set). */
  readonly advertise?: Address;
  /** The seeds. */
  readonly seeds: readonly string[];
  /** How gossip is signed. */
  readonly auth: AuthConfig;
  /** The salt, if any. */
  readonly keySalt?: Uint8Array<ArrayBuffer>;
  /** The clock, if not the runtime's. */
  readonly clock?: () => number;
}

/**
 * Checks every option and fills in the defaults: the one place a guard's
 * options are validated.
 *
 * @param options The options, as the builder filled them.
 * @returns The options with every default in place.
 * @throws {TypeError} naming the option of the wrong type, or a missing limit.
 * @throws {RangeError} naming the option out of its bounds, or two that disagree.
 */
export function resolveGuardOptions(options: GuardOptions): ResolvedGuardOptions {
  if (options.limit === undefined) {
    throw new TypeError(
      "Guard.builder(): set a limit with .limit(perSec) or .defaultLimit(limit) before spawn()",
    );
  }
  const limit = checkLimit(options.limit, "defaultLimit");
  const numbers = {} as Record<NumericOption, number>;
  for (const name of Object.keys(GUARD_BOUNDS) as NumericOption[]) {
    numbers[name] = checkOption(name, options[name] ?? GUARD_BOUNDS[name].default);
  }
  if (numbers.trackedKeys < numbers.hotKeys) {
    throw new RangeError(
      `trackedKeys (${numbers.trackedKeys}) must be at least hotKeys (${numbers.hotKeys})`,
    );
  }
  const classes = options.classes ?? new Map<string, Limit>();
  for (const [name, l] of classes) checkClass(name, l);
  if (classes.size > numbers.maxClasses) {
    throw new RangeError(
      `maxClasses: ${classes.size} classes, more than maxClasses (${numbers.maxClasses})`,
    );
  }
  const bind = options.bind === undefined ? undefined : checkAddress(options.bind, "bind");
  const advertise = options.advertise === undefined ? undefined : checkAdvertise(options.advertise);
  if (bind !== undefined && isUnspecified(bind) && advertise === undefined) {
    throw new RangeError(
      `bind ${bind} listens on every address: ` +
        "set advertise(ip:port), where the other instances reach this one",
    );
  }
  if (options.fleetRules === true && bind === undefined) {
    throw new RangeError("fleetRules: rules are shared by gossip; set bind(ip:port) too");
  }
  if (bind !== undefined && options.gossipAuth === undefined) throw unsaidAuth(bind);
  const auth = options.gossipAuth ?? { mode: "off", secrets: [] };
  return {
    ...numbers,
    limit: options.burst === undefined ? limit : limit.burst(options.burst),
    classes,
    dryRun: checkBoolean(options.dryRun ?? false, "dryRun"),
    fleetRules: checkBoolean(options.fleetRules ?? false, "fleetRules"),
    sharedBurst: options.sharedBurst === undefined
      ? undefined
      : checkBoolean(options.sharedBurst, "sharedBurst"),
    partitionPolicy: checkPolicy(options.partitionPolicy ?? DEFAULT_PARTITION_POLICY),
    ...(bind === undefined ? {} : { bind }),
    ...(advertise === undefined ? {} : { advertise }),
    seeds: checkSeeds(options.seeds ?? []),
    auth: authConfig(auth.mode, auth.secrets),
    ...(options.keySalt === undefined ? {} : { keySalt: checkSalt(options.keySalt) }),
    ...(options.clock === undefined ? {} : { clock: checkClock(options.clock) }),
  };
}

/**
 * Gossip that nobody chose to leave unsigned is refused: signing off lets
 * anyone who reaches the port shift shares and rules, and off is what a
 * fleet would get if nobody chose. Any bound guard counts, seeds or none:
 * the first of a fleet has no seeds, and every other member joins it.
 */
function unsaidAuth(bind: Address): RangeError {
  return new RangeError(
    `bind ${bind}: gossip is signed unless you say otherwise: ` +
      "set gossipAuth(GossipAuth.Required, [secret]) to sign it, " +
      "or gossipAuth(GossipAuth.Off) to say the network is trusted",
  );
}

/**
 * Checks a class: a non-empty name and a limit.
 *
 * @param name The class's name.
 * @param limit Its limit.
 * @throws {TypeError} when the name is not a non-empty string or the limit not a {@link Limit}.
 */
export function checkClass(name: unknown, limit: unknown): void {
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`class: the name must be a non-empty string, got ${describe(name)}`);
  }
  checkLimit(limit, `class(${JSON.stringify(name)})`);
}

/**
 * Checks the clock option.
 *
 * @param clock What the caller gave.
 * @returns The clock.
 * @throws {TypeError} when it is not a function.
 */
export function checkClock(clock: unknown): () => number {
  if (typeof clock !== "function") {
    throw new TypeError(
      `clock: expected a function returning milliseconds, got ${describe(clock)}`,
    );
  }
  return clock as () => number;
}

/**
 * Checks a boolean option.
 *
 * @param on What the caller gave.
 * @param what The option, named in the error.
 * @returns The boolean.
 * @throws {TypeError} when it is not a boolean.
 */
export function checkBoolean(on: unknown, what: string): boolean {
  if (typeof on !== "boolean") {
    throw new TypeError(`${what}: expected a boolean, got ${describe(on)}`);
  }
  return on;
}

/**
 * Checks a partition policy option, or reads its text.
 *
 * @param policy A {@link PartitionPolicy} or its text (`optimistic`, `quorum`, `holddown:10s`).
 * @returns The policy.
 * @throws {TypeError} when it is neither.
 */
export function checkPolicy(policy: unknown): PartitionPolicy {
  if (typeof policy === "string") return PartitionPolicy.parse(policy);
  if (policy instanceof PartitionPolicy) return policy;
  throw new TypeError(
    `partitionPolicy: expected a PartitionPolicy or its name, got ${describe(policy)}`,
  );
}

/**
 * Reads an `ip:port` option.
 *
 * @param text What the caller gave.
 * @param what The option, named in the error.
 * @returns The address.
 * @throws {TypeError} when it is not an IP literal and a port.
 */
export function checkAddress(text: unknown, what: string): Address {
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

/**
 * Reads the `advertise` option: a routable address with a port.
 *
 * @param text What the caller gave.
 * @returns The address.
 * @throws {TypeError} when it is not an IP literal and a port.
 * @throws {RangeError} when it is unspecified (`0.0.0.0`, `::`) or its port 0.
 */
export function checkAdvertise(text: unknown): Address {
  const a = checkAddress(text, "advertise");
  if (a.port === 0 || isUnspecified(a)) {
    throw new RangeError(
      `advertise: needs a routable address and a port, got ${JSON.stringify(text)}`,
    );
  }
  return a;
}

/**
 * Checks the seeds: each `ip:port`, `[v6]:port` or `host:port`.
 *
 * @param seeds What the caller gave.
 * @returns The seeds, as a fresh array.
 * @throws {TypeError} naming the first seed that is none of these.
 */
export function checkSeeds(seeds: Iterable<unknown>): string[] {
  const list = [...seeds];
  for (const seed of list) {
    try {
      parseSeed(seed as string);
    } catch {
      throw new TypeError(`seeds: expected ip:port or host:port, got ${describe(seed)}`);
    }
  }
  return list as string[];
}

/**
 * Checks a key salt.
 *
 * @param bytes What the caller gave.
 * @param what The option or function, named in the error.
 * @returns A copy of the salt, so that a caller's later change of its buffer changes nothing.
 * @throws {TypeError} when it is not a `Uint8Array`.
 * @throws {RangeError} when it is shorter than 16 bytes.
 */
export function checkSalt(bytes: unknown, what = "keySalt"): Uint8Array<ArrayBuffer> {
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError(`${what}: expected bytes (a Uint8Array), got ${describe(bytes)}`);
  }
  if (bytes.length < MIN_SALT_BYTES) {
    throw new RangeError(
      `${what}: a salt needs at least ${MIN_SALT_BYTES} bytes, got ${bytes.length}`,
    );
  }
  return bytes.slice();
}

/**
 * Whether an address listens on every interface (`0.0.0.0`, `::`), so that
 * nobody can be told to reach it there.
 *
 * @param a The address.
 * @returns Whether every byte of its IP is 0.
 */
export function isUnspecified(a: Address): boolean {
  return a.ip.every((b) => b === 0);
}
