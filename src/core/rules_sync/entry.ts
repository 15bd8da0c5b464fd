/**
 * One rule of the fleet's table as a value: what it names (kind, class,
 * key), what it says (a limit, another class's limit, a flag, or nothing:
 * removed), and the version that orders it against every other change of
 * the same rule. The merge rule of the table is {@link compareVersions}.
 *
 * @module
 */

import { KeyLimit } from "../key_limit.ts";
import { Limit } from "../limit.ts";

/**
 * Rule kinds and their numbers on the wire. Append-only: a number keeps
 * its meaning forever.
 */
export const RULE_KINDS = {
  /** A named class's limit; the class is the rule's `className`. */
  class: 1,
  /** One key's own limit, or a class's for it (`KeyLimit.class`). */
  keyLimit: 2,
  /** A class's shadow limit. */
  shadow: 3,
  /** The default class's limit. */
  defaultLimit: 4,
  /** Whether every instance admits all and counts what it would deny. */
  dryRun: 5,
  /** One key shut out until an instant of the fleet's wall clock ({@link BlockedUntil}). */
  block: 6,
} as const;

/** The name of a rule kind. */
export type RuleKind = keyof typeof RULE_KINDS;

/**
 * What a block says: the key is denied until `untilMs` of the wall clock,
 * an instant rather than a length, so that an instance that learns of the
 * block late blocks only for what is left of it. Once the instant has
 * passed, a block is held as a removal (see `table.ts`).
 */
export class BlockedUntil {
  /** Wall-clock ms the block ends at. */
  readonly untilMs: number;

  /**
   * A block that ends at `untilMs`.
   *
   * @param untilMs Wall-clock ms the block ends at, a whole number.
   */
  constructor(untilMs: number) {
    this.untilMs = untilMs;
  }
}

/** What a rule says; `undefined` in an entry is a removal (a tombstone). */
export type RuleValue = Limit | KeyLimit | boolean | BlockedUntil;

/** The member that made a change, as the two halves of its member ID. */
export interface Origin {
  /** The ID's high 32 bits. */
  readonly hi: number;
  /** The ID's low 32 bits. */
  readonly lo: number;
}

/**
 * The version of a change: a hybrid logical clock reading (wall-clock
 * milliseconds times {@link HLC_TICKS_PER_MS}, plus a counter for changes
 * within one millisecond or behind a clock seen ahead), then the origin's
 * member ID to break a tie.
 */
export interface Version {
  /** The clock reading, a whole number below 2^53. */
  readonly clock: number;
  /** Who made the change. */
  readonly origin: Origin;
}

/** One rule at one version. */
export interface RuleEntry {
  /** Which kind of rule. */
  readonly kind: RuleKind;
  /** Its class (`""` for the default class, and for `defaultLimit` and `dryRun`). */
  readonly className: string;
  /** The key, for a `keyLimit` or a `block`; `""` otherwise. */
  readonly key: string;
  /** What it says, or `undefined`: removed. */
  readonly value: RuleValue | undefined;
  /** Its version. */
  readonly version: Version;
}

/** Logical ticks in a millisecond of the clock: room for 1,024 changes a millisecond. */
export const HLC_TICKS_PER_MS = 1_024;
/** The largest clock reading: 2^53 − 1, the last whole number a double holds exactly. */
export const MAX_CLOCK = Number.MAX_SAFE_INTEGER;
/** How long a removal is kept, by the clock of its version: an hour. See `mod.ts`. */
export const TOMBSTONE_MS = 3_600_000;
/** A change stamped further ahead of this member's wall clock is refused: clocks must agree within a minute. */
export const MAX_CLOCK_SKEW_MS = 60_000;

/**
 * Orders two versions: the higher clock is newer, and at the same clock
 * the higher origin ID. Two changes by one member never share a clock, so
 * equal versions are the same change.
 *
 * @param a A version.
 * @param b Another.
 * @returns Negative if `a` is older, positive if newer, 0 if the same.
 */
export function compareVersions(a: Version, b: Version): number {
  return compareVersionParts(a, b.clock, b.origin.hi, b.origin.lo);
}

/**
 * {@link compareVersions} against a version given as its parts, as the
 * table keeps them (no object a version).
 *
 * @param a A version.
 * @param clock The other's clock reading.
 * @param hi The high half of the other's origin.
 * @param lo The low half of the other's origin.
 * @returns Negative if `a` is older, positive if newer, 0 if the same.
 */
export function compareVersionParts(a: Version, clock: number, hi: number, lo: number): number {
  if (a.clock !== clock) return a.clock < clock ? -1 : 1;
  if (a.origin.hi !== hi) return a.origin.hi < hi ? -1 : 1;
  if (a.origin.lo !== lo) return a.origin.lo < lo ? -1 : 1;
  return 0;
}

/** The wall-clock millisecond a version was made at, by its origin's clock. */
export function versionMs(version: Version): number {
  return clockMs(version.clock);
}

/** The wall-clock millisecond of a clock reading. */
export function clockMs(clock: number): number {
  return Math.floor(clock / HLC_TICKS_PER_MS);
}

/**
 * The table's key of a rule: kind, class and key, unambiguous (the class's
 * length comes first, so no class and key pair reads as another).
 *
 * @param kind The rule's kind.
 * @param className Its class.
 * @param key Its key.
 * @returns A string that names that rule only.
 */
export function ruleId(kind: RuleKind, className: string, key: string): string {
  return `${RULE_KINDS[kind]}:${className.length}:${className}${key}`;
}

/** Whether a rule of `kind` names a key (a key limit, a block); the others name none. */
export function keyed(kind: RuleKind): boolean {
  return kind === "keyLimit" || kind === "block";
}

/** Whether two values say the same, for tests and for stats. */
export function sameValue(a: RuleValue | undefined, b: RuleValue | undefined): boolean {
  if (a instanceof Limit && b instanceof Limit) {
    return a.equals(b) && a.hasExplicitBurst() === b.hasExplicitBurst();
  }
  if (a instanceof KeyLimit && b instanceof KeyLimit) return a.className === b.className;
  if (a instanceof BlockedUntil && b instanceof BlockedUntil) return a.untilMs === b.untilMs;
  return a === b;
}

/**
 * Whether `value` fits `kind`: a class, shadow or default limit is a
 * `Limit`; a key limit a `Limit` or a `KeyLimit`; dry run a boolean. A
 * removal fits any kind but `defaultLimit` and `dryRun`, which cannot be
 * absent: there, it means "back to what this instance was started with".
 *
 * @param kind The rule's kind.
 * @param className Its class.
 * @param key Its key.
 * @returns Why it does not fit, or undefined when it does.
 */
export function misfit(
  kind: RuleKind,
  className: string,
  key: string,
  value: RuleValue | undefined,
): string | undefined {
  // The default class `""` has a shadow like any class, but its limit is the `defaultLimit` rule.
  if (kind === "class" && className === "") return "a class rule needs a class name";
  if (keyed(kind) ? key === "" : key !== "") return `a ${kind} rule's key is wrong`;
  if ((kind === "defaultLimit" || kind === "dryRun") && className !== "") {
    return `a ${kind} rule names no class`;
  }
  if (value === undefined) return undefined;
  if (kind === "dryRun") return typeof value === "boolean" ? undefined : "dry run is a boolean";
  if (kind === "block") {
    return value instanceof BlockedUntil && Number.isSafeInteger(value.untilMs) &&
        value.untilMs >= 0
      ? undefined
      : "a block is an instant";
  }
  if (value instanceof BlockedUntil) return `a ${kind} rule is no block`;
  if (kind === "keyLimit") {
    return value instanceof Limit || value instanceof KeyLimit ? undefined : "not a key limit";
  }
  return value instanceof Limit ? undefined : `a ${kind} rule is a Limit`;
}
