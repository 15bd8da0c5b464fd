/**
 * All-or-nothing batches: several keys checked at once, where one denial
 * means none consumes anything. The enforcer finds the slots and commits;
 * this module checks the items and decides the batch from the slots'
 * debts, consuming nothing itself.
 *
 * @module
 */

import { admitDebt, allowedDecision, deniedDecision } from "./gcra.ts";
import { Decision } from "./decision.ts";
import type { Slot } from "./keytable.ts";
import { describe } from "./describe.ts";
import { isCost, MAX_COST } from "./limit.ts";
import type { BatchItem } from "./options.ts";
import type { LimitBook } from "./rules.ts";

/** The outcome of an all-or-nothing batch. */
export interface BatchDecision extends Decision {
  /** One decision per item, in order; all allowed, or none consumed. */
  readonly decisions: readonly Decision[];
}

/**
 * Throws the caller's mistake in a cost, naming it.
 *
 * @param cost The cost of a check.
 * @throws {RangeError} when `cost` is not a whole number from 1 to `MAX_COST`.
 */
export function checkCost(cost: number): void {
  if (!isCost(cost)) {
    throw new RangeError(
      `cost must be a whole number from 1 to ${MAX_COST}, got ${describe(cost)}`,
    );
  }
}

/**
 * The same (class, key) given twice in one batch: a `TypeError` (its name
 * and message are a TypeError's, `checkAll: the key ... appears twice`)
 * that also says at which item the pair came again, so that a caller who
 * reads the batch from a request (the sidecar) names that item without
 * comparing the pairs again.
 */
export class DuplicateItemError extends TypeError {
  /** Where in the batch the pair appeared the second time. */
  readonly item: number;

  /**
   * The refusal of the pair at `item`, which an earlier item already gave.
   *
   * @param className The class of the pair.
   * @param key The key of the pair.
   * @param item Where in the batch it came again.
   */
  constructor(className: string, key: string, item: number) {
    super(
      `checkAll: the key ${JSON.stringify(key)} of class ${
        JSON.stringify(className)
      } appears twice`,
    );
    this.item = item;
  }
}

/**
 * Throws if a batch is malformed: not a non-empty array of items, an item
 * with a bad key, class or cost, or the same (class, key) twice.
 *
 * @param items The batch.
 * @param book The book, which checks keys and class names.
 * @throws {TypeError} when an item is malformed, or ({@link DuplicateItemError}) appears twice.
 * @throws {RangeError} when a cost is out of range or a key too long.
 */
export function checkBatch(items: readonly BatchItem[], book: LimitBook): void {
  if (!Array.isArray(items) || items.length === 0) {
    throw new TypeError(
      `checkAll: expected a non-empty array of { key, class?, cost? }, got ${describe(items)}`,
    );
  }
  const seen = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === null || typeof item !== "object") {
      throw new TypeError(
        `checkAll: each item must be { key, class?, cost? }, got ${describe(item)}`,
      );
    }
    const className = item.class ?? "";
    book.checkKey(className, item.key, "checkAll", i);
    if (item.cost !== undefined) checkCost(item.cost);
    const id = `${className.length}:${className}${item.key}`;
    if (seen.has(id)) throw new DuplicateItemError(className, item.key, i);
    seen.add(id);
  }
}

/** A batch decided: its decision, and the debts to commit if every item was admitted. */
export interface DecidedBatch {
  /** What the batch reports (in a dry run: allowed, whatever it decided). */
  readonly decision: BatchDecision;
  /** Whether every item was admitted: commit `debts` then, nothing otherwise. */
  readonly allAllowed: boolean;
  /** Each slot's debt as the batch leaves it, as of the later of its instant and now. */
  readonly debts: ReadonlyMap<Slot, number>;
}

/**
 * Decides a batch over its items' slots (already refreshed), consuming
 * nothing. Two items may share a slot (the overflow allowance): each is
 * decided on the debt the items before it leave.
 *
 * @param slots Each item's slot, in order.
 * @param costs Each item's cost, in order.
 * @param nowUs The time, µs of the time base.
 * @param dryRun Whether a denied batch is reported allowed.
 * @returns The decision and the debts to commit.
 */
export function decideBatch(
  slots: readonly Slot[],
  costs: readonly number[],
  nowUs: number,
  dryRun: boolean,
): DecidedBatch {
  const debts = new Map<Slot, number>();
  const next: number[] = [];
  let allAllowed = true;
  const at = (slot: Slot) => Math.max(slot.atUs, nowUs);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i];
    const owed = debts.get(slot);
    const debt = owed === undefined
      ? admitDebt(slot.debt, slot.atUs, slot.rule, costs[i], nowUs)
      : admitDebt(owed, at(slot), slot.rule, costs[i], nowUs);
    next.push(debt);
    if (debt === debt) debts.set(slot, debt);
    else allAllowed = false;
  }
  const decisions = slots.map((slot, i) => {
    const debt = next[i];
    if (debt === debt) return allowedDecision(debt, at(slot), slot.rule, nowUs);
    const owed = debts.get(slot);
    return owed === undefined
      ? deniedDecision(slot.debt, slot.atUs, slot.rule, costs[i], nowUs)
      : deniedDecision(owed, at(slot), slot.rule, costs[i], nowUs);
  });
  const allowed = allAllowed || dryRun;
  return {
    allAllowed,
    debts,
    decision: {
      allowed,
      retryAfterMs: allowed ? 0 : Math.max(...decisions.map((d) => d.retryAfterMs)),
      remaining: Math.min(...decisions.map((d) => d.remaining)),
      resetMs: Math.max(...decisions.map((d) => d.resetMs)),
      decisions: allowed && !allAllowed ? decisions.map(dryRunAllowed) : decisions,
    },
  };
}

function dryRunAllowed(d: Decision): Decision {
  return d.allowed ? d : new Decision(true, 0, 0, d.resetMs);
}
