/**
 * Options of a membership node, their defaults and their checks.
 *
 * @module
 */

import type { MembershipExtension } from "./extension.ts";
import { GUARD_BOUNDS } from "../options.ts";

/** Tunables of SWIM and Lifeguard; every field is optional. */
export interface MembershipOptions {
  /**
   * Seed of the node's random choices (probe order, helpers, sequence
   * numbers) and of its life (see `Sender.life`). The core draws no
   * randomness of its own, so there is no default: in a real process give
   * `crypto.getRandomValues(new Uint32Array(1))[0]`, so that a restarted
   * node is told from its earlier life and a stranger cannot compute its
   * sequence numbers from its address; in a simulation give a fixed one,
   * so that a run replays.
   */
  readonly seed: number;
  /**
   * Peers to join through, as `ip:port`, `[v6]:port` or `host:port` (not to
   * be confused with `seed`). An IP is a seed from the start; a host name is
   * looked up when the node asks (`pollResolve`). A node with seeds is
   * joining until it reaches a live member, unless every seed turns out to
   * name only itself: then it is the first of its fleet.
   *
   * @default {none: a fleet of one that others may join}
   */
  readonly seeds?: readonly string[];
  /**
   * How often the node probes a member.
   *
   * @default {200 (GUARD_BOUNDS.protocolPeriodMs)}
   */
  readonly protocolPeriodMs?: number;
  /**
   * How long a direct probe waits before asking helpers.
   *
   * @default {half the period}
   */
  readonly probeTimeoutMs?: number;
  /**
   * How many helpers an indirect probe asks (SWIM's k).
   *
   * @default {3}
   */
  readonly indirectProbes?: number;
  /**
   * Suspicion timeout with no confirmation, in a fleet of at most 10
   * members; larger fleets scale it as they do `suspicionMinMs` (see
   * `suspicionBoundsMs`).
   *
   * @default {30 periods (6 s at 200 ms)}
   */
  readonly suspicionMaxMs?: number;
  /**
   * Suspicion timeout once `suspicionConfirmations` are in, in a fleet of
   * at most 10 members. A suspicion must reach its suspect and the
   * refutation spread back, each about log N rounds of gossip, so when a
   * suspicion starts both bounds are multiplied by max(1, log10 N), N the
   * live members this node knows, itself included (this one at most 1.75
   * times): at 200 ms, 2 s up to 10 members, 3.4 s at 50, 3.5 s beyond.
   *
   * @default {10 periods (2 s at 200 ms)}
   */
  readonly suspicionMinMs?: number;
  /**
   * Independent suspicions that bring the timeout down to its minimum.
   *
   * @default {3}
   */
  readonly suspicionConfirmations?: number;
  /**
   * λ: each update is sent λ · ⌈log10(N + 1)⌉ times.
   *
   * @default {4}
   */
  readonly retransmitMult?: number;
  /**
   * How long dead and departed members are remembered.
   *
   * @default {600_000 (ten minutes)}
   */
  readonly tombstoneMs?: number;
  /**
   * Members kept, the dead not yet forgotten and this node included, 1 to 65,536.
   *
   * @default {8192 (GUARD_BOUNDS.maxMembers)}
   */
  readonly maxMembers?: number;
  /**
   * How often a seed that is not a live member is contacted again.
   *
   * @default {10_000}
   */
  readonly seedIntervalMs?: number;
  /**
   * Highest Lifeguard awareness score; probes slow down by (score + 1).
   *
   * @default {8}
   */
  readonly maxAwareness?: number;
  /**
   * Alive records of random members added to each datagram with room to spare.
   *
   * @default {2}
   */
  readonly antiEntropyRecords?: number;
  /**
   * The layer above (allocation): extra payload and member events.
   *
   * @default {none}
   *
   * @internal For the fleet node, which sets it.
   */
  readonly extension?: MembershipExtension;
}

/** Options with every default filled in. */
export type MembershipConfig = Required<Omit<MembershipOptions, "extension" | "seed" | "seeds">>;

/** Upper bound of `maxMembers`. */
export const MAX_MEMBERS_LIMIT: number = GUARD_BOUNDS.maxMembers.max;

/**
 * Fills in defaults and checks every value.
 *
 * @throws {RangeError} naming the first value out of its range.
 */
export function resolveConfig(options: Omit<MembershipOptions, "seed">): MembershipConfig {
  const periodMs = options.protocolPeriodMs ?? GUARD_BOUNDS.protocolPeriodMs.default;
  positive("protocolPeriodMs", periodMs);
  const config: MembershipConfig = {
    protocolPeriodMs: periodMs,
    probeTimeoutMs: options.probeTimeoutMs ?? periodMs / 2,
    indirectProbes: options.indirectProbes ?? 3,
    suspicionMaxMs: options.suspicionMaxMs ?? 30 * periodMs,
    suspicionMinMs: options.suspicionMinMs ?? 10 * periodMs,
    suspicionConfirmations: options.suspicionConfirmations ?? 3,
    retransmitMult: options.retransmitMult ?? 4,
    tombstoneMs: options.tombstoneMs ?? 600_000,
    maxMembers: options.maxMembers ?? GUARD_BOUNDS.maxMembers.default,
    seedIntervalMs: options.seedIntervalMs ?? 10_000,
    maxAwareness: options.maxAwareness ?? 8,
    antiEntropyRecords: options.antiEntropyRecords ?? 2,
  };
  positive("probeTimeoutMs", config.probeTimeoutMs);
  if (config.probeTimeoutMs >= periodMs) {
    throw new RangeError(
      `probeTimeoutMs must be shorter than protocolPeriodMs (${periodMs}), got ${config.probeTimeoutMs}`,
    );
  }
  positive("suspicionMinMs", config.suspicionMinMs);
  if (config.suspicionMaxMs < config.suspicionMinMs) {
    throw new RangeError(
      `suspicionMaxMs must be at least suspicionMinMs (${config.suspicionMinMs}), got ${config.suspicionMaxMs}`,
    );
  }
  positive("tombstoneMs", config.tombstoneMs);
  positive("seedIntervalMs", config.seedIntervalMs);
  integer("indirectProbes", config.indirectProbes, 0, 64);
  integer("suspicionConfirmations", config.suspicionConfirmations, 0, 64);
  integer("retransmitMult", config.retransmitMult, 1, 64);
  integer("maxMembers", config.maxMembers, 1, MAX_MEMBERS_LIMIT);
  integer("maxAwareness", config.maxAwareness, 0, 64);
  integer("antiEntropyRecords", config.antiEntropyRecords, 0, 64);
  return config;
}

/**
 * The most the least suspicion timeout grows with the fleet (reached at 56
 * members): it applies once `suspicionConfirmations` members have each
 * failed to reach the suspect on their own, and under loss they seldom do
 * for a living one now that a probe retries its pings a round trip apart
 * (`rtt.ts`). Grown by log10 N like the most, it was 6 s at a thousand
 * members, and a crash took 7 s to be known by all.
 */
const MIN_SCALE_MAX = 1.75;

/**
 * The suspicion timeout's bounds for a suspicion that starts while this
 * node knows `liveMembers` live members, itself included: the configured
 * ones up to 10 members, times log10 of the count beyond (the least no
 * more than `MIN_SCALE_MAX` times).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveConfig, suspicionBoundsMs } from "./config.ts";
 * const config = resolveConfig({});
 * assert.deepEqual(suspicionBoundsMs(config, 5), { minMs: 2_000, maxMs: 6_000 });
 * assert.deepEqual(suspicionBoundsMs(config, 1_000), { minMs: 3_500, maxMs: 18_000 });
 * ```
 *
 * @param config The node's configuration.
 * @param liveMembers Alive and suspect members known, this node included.
 * @returns The least and the most time a suspect is given to refute, ms.
 */
export function suspicionBoundsMs(
  config: Pick<MembershipConfig, "suspicionMinMs" | "suspicionMaxMs">,
  liveMembers: number,
): { minMs: number; maxMs: number } {
  const scale = Math.max(1, Math.log10(Math.max(1, liveMembers)));
  return {
    minMs: config.suspicionMinMs * Math.min(scale, MIN_SCALE_MAX),
    maxMs: config.suspicionMaxMs * scale,
  };
}

/**
 * Checks the seed a node is given (see `MembershipOptions.seed`).
 *
 * @throws {TypeError} when there is none, or it is not an integer.
 */
export function checkSeed(seed: unknown): number {
  if (!Number.isInteger(seed)) {
    throw new TypeError(
      `membership.seed: expected an integer, got ${String(seed)}: draw one with ` +
        "getRandomValues for a live node, fix one for a simulation",
    );
  }
  return seed as number;
}

function positive(name: string, value: number): void {
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a positive finite number of milliseconds, got ${value}`);
  }
}

function integer(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
}
