/**
 * One key's story, and the keys denied most lately: the per-key figures of
 * the stats, computed from counters the request path keeps on each key's
 * slot, when someone asks, never per check.
 *
 * @module
 */

import type { Enforcer } from "../core/enforcer.ts";
import { type HashKey, hashToBigInt, keyHash64 } from "../core/hash.ts";
import { COOLED_PER_SEC, hasCooled, updateRates } from "../core/key_rates.ts";
import type { Slot } from "../core/keytable.ts";
import type { Limit } from "../core/limit.ts";
import type { LimitBook } from "../core/rules.ts";

/**
 * How one key fares on this instance, over the last ten seconds or so (a
 * moving average); a key first seen less than ten seconds ago counts the
 * time before as quiet, so one check reads 0.1 a second.
 */
export interface KeyStats {
  /** Requests a second (each weighted by its cost). */
  readonly requestsPerSec: number;
  /** Denials a second (in a dry run: would-be denials). */
  readonly deniedPerSec: number;
  /** What its shadow would deny, a second. */
  readonly shadowDeniedPerSec: number;
  /** The rate it is admitted at here now: its share, before the burst. */
  readonly share: number;
  /** The limit it is held to: its own, or its class's. */
  readonly limit: Limit;
  /** Its shadow limit, if it runs under one. */
  readonly shadow: Limit | undefined;
  /** How long it stays blocked here (`guard.block`), ms; 0 when it is not. */
  readonly blockedForMs: number;
}

/** A key among the most denied, by its 64-bit hash (see `guard.keyHash`). */
export interface DeniedKey {
  /** The key's hash. */
  readonly hash: bigint;
  /** Denials a second. */
  readonly deniedPerSec: number;
  /** Requests a second. */
  readonly requestsPerSec: number;
  /** Shadow denials a second. */
  readonly shadowDeniedPerSec: number;
}

/** A {@link DeniedKey} with its name. */
export interface NamedDeniedKey extends DeniedKey {
  /** The key's class; `""` is the default. */
  readonly className: string;
  /** The key. */
  readonly key: string;
}

/** The stats of one key, or undefined if this instance keeps no state for it; creates none. */
export function keyStatsOf(
  parts: { enforcer: Enforcer; book: LimitBook },
  className: string,
  key: string,
  nowMs: number,
): Omit<KeyStats, "blockedForMs"> | undefined {
  const slot = parts.enforcer.slotOf(className, key);
  if (slot === undefined) return undefined;
  const r = updateRates(slot, nowMs);
  const resolved = parts.book.resolve(className, key);
  return {
    requestsPerSec: r.requestsPerSec,
    deniedPerSec: r.deniedPerSec,
    shadowDeniedPerSec: r.shadowDeniedPerSec,
    share: parts.enforcer.currentRate(className, key),
    limit: resolved.limit,
    shadow: resolved.shadow?.limit,
  };
}

/**
 * The `k` keys denied most lately and the `k` a shadow would deny most,
 * from the keys the enforcer noted, skipping those that have cooled (the
 * enforcer forgets them when it needs the room: this read changes nothing).
 */
export function mostDenied(
  enforcer: Enforcer,
  options: { k: number; nowMs: number; hashKey: HashKey },
): { mostDenied: DeniedKey[]; mostShadowDenied: DeniedKey[] };
/** As above, each key named with its class, for an operator's eyes (the dashboard). */
export function mostDenied(
  enforcer: Enforcer,
  options: { k: number; nowMs: number; hashKey: HashKey; named: true },
): { mostDenied: NamedDeniedKey[]; mostShadowDenied: NamedDeniedKey[] };
export function mostDenied(
  enforcer: Enforcer,
  options: { k: number; nowMs: number; hashKey: HashKey; named?: boolean },
): { mostDenied: DeniedKey[]; mostShadowDenied: DeniedKey[] } {
  const rows: { slot: Slot; denied: number; shadow: number; requests: number }[] = [];
  for (const slot of enforcer.noted) {
    const r = updateRates(slot, options.nowMs);
    if (hasCooled(r)) continue;
    rows.push({
      slot,
      denied: r.deniedPerSec,
      shadow: r.shadowDeniedPerSec,
      requests: r.requestsPerSec,
    });
  }
  if (options.k === 0) return { mostDenied: [], mostShadowDenied: [] };
  const top = (by: "denied" | "shadow") =>
    rows.filter((x) => x[by] >= COOLED_PER_SEC).sort((a, b) => b[by] - a[by]).slice(0, options.k)
      .map((x) => ({
        hash: hashToBigInt(x.slot.hash ?? keyHash64(options.hashKey, x.slot.className, x.slot.key)),
        deniedPerSec: x.denied,
        requestsPerSec: x.requests,
        shadowDeniedPerSec: x.shadow,
        ...(options.named ? { className: x.slot.className, key: x.slot.key } : {}),
      }));
  return { mostDenied: top("denied"), mostShadowDenied: top("shadow") };
}
