/**
 * What a caller does to one key besides checking it: give back what a
 * check took (refund), forget its state (reset), or shut it out for a while
 * (block). None of them adds work to the request path: each moves the
 * key's GCRA state, which the next check reads as it reads any other.
 *
 * A block is a debt of the whole burst as of an instant in the future: until
 * then the debt does not come down (`owedAt` pays nothing back before its
 * instant), so every check is denied with the wait that is left; after it,
 * the burst comes back at the key's rate. An admission never leaves a
 * key's instant in the future, so a key is blocked exactly while its
 * instant is ahead of now. A refund lowers the debt, never below nothing
 * (it gives back at most what the key still owes, so never more than was
 * taken) and never while the key is blocked, so a refund cannot lift a
 * block.
 *
 * A blocked key's slot lives in the enforcer's block set, bounded by
 * `maxBlocks`, not in the key table (`blocks.ts`): blocks never take the
 * places check traffic needs, and a block made when the set is full ends
 * the one nearest its end.
 *
 * @module
 */

import type { Enforcer } from "./enforcer.ts";
import { owedAt } from "./gcra.ts";
import { describe, MAX_COST } from "./limit.ts";
import type { Rule } from "./rule.ts";
import { US_PER_MS, usToMs } from "./time.ts";

/** The longest block, ms: a year. */
export const MAX_BLOCK_MS = 365 * 86_400_000;

/**
 * Gives back `cost` requests a check of the key took: the debt comes down
 * by them, to nothing at most. Does nothing to a key with no state here, to
 * one in the shared overflow allowance, or to a blocked one.
 *
 * @returns Whether the key's state changed.
 * @throws {TypeError} when `key` is not a non-empty string.
 * @throws {RangeError} when `cost` is not a whole number from 1 to `MAX_COST`.
 */
export function refund(
  enforcer: Enforcer,
  target: { className: string; key: string; cost: number },
  nowMs: number,
): boolean {
  if (!Number.isInteger(target.cost) || target.cost < 1 || target.cost > MAX_COST) {
    throw new RangeError(
      `refund: cost must be a whole number from 1 to ${MAX_COST}, got ${describe(target.cost)}`,
    );
  }
  const at = enforcer.slotAt(target.className, target.key, nowMs, false);
  if (at === undefined || at.slot.atUs > at.nowUs) return false;
  const { slot, nowUs } = at;
  const owed = owedAt(slot.debt, slot.atUs, slot.rule, nowUs);
  if (owed === 0) return false;
  slot.debt = Math.max(0, owed - target.cost * slot.rule.unitsPerRequest);
  slot.atUs = nowUs;
  const shadow = slot.rule.shadow, s = slot.shadow;
  if (shadow !== undefined && s !== undefined && s.atUs <= nowUs) {
    s.debt = Math.max(
      0,
      owedAt(s.debt, s.atUs, shadow, nowUs) - target.cost * shadow.unitsPerRequest,
    );
    s.atUs = nowUs;
  }
  return true;
}

/**
 * Forgets what the key owes, a block included: it stands as a new key would
 * (one request of its burst while new keys start lean, else all of it).
 *
 * @returns Whether the key had state here.
 * @throws {TypeError} when `key` is not a non-empty string.
 */
export function reset(enforcer: Enforcer, className: string, key: string, nowMs: number): boolean {
  const at = enforcer.slotAt(className, key, nowMs, false);
  if (at === undefined) return false;
  const { slot, nowUs } = at;
  slot.lean = enforcer.startLean;
  slot.debt = slot.lean ? slot.leanDebt() : 0;
  slot.atUs = nowUs;
  if (slot.shadow !== undefined) slot.shadow = undefined;
  enforcer.releaseBlock(slot, nowMs);
  return true;
}

/**
 * Denies every check of the key for `ms`, after which its burst comes back
 * at its rate, as if it had just spent it. A block longer than one in force
 * replaces it; a shorter one leaves it. The block takes no place in the
 * key table; a full block set makes room by ending the block nearest its end.
 *
 * @returns Whether the key is blocked: always, since the block set makes room.
 * @throws {TypeError} when `key` is not a non-empty string.
 * @throws {RangeError} when `ms` is not a number from 0 (exclusive) to `MAX_BLOCK_MS`.
 */
export function block(
  enforcer: Enforcer,
  target: { className: string; key: string; ms: number },
  nowMs: number,
): boolean {
  const { ms } = target;
  if (typeof ms !== "number" || !(ms > 0) || !(ms <= MAX_BLOCK_MS)) {
    throw new RangeError(
      `block: ms must be a number above 0 and at most ${MAX_BLOCK_MS} (a year), got ${
        describe(ms)
      }`,
    );
  }
  const at = enforcer.slotAt(target.className, target.key, nowMs, true);
  if (at === undefined) return false;
  const { slot, nowUs } = at;
  const untilUs = nowUs + Math.ceil(ms * US_PER_MS);
  if (untilUs > slot.atUs) {
    blockSlot(slot, untilUs);
    enforcer.holdBlock(slot, nowMs);
  }
  return true;
}

/**
 * Blocks the key until `untilMs` exactly, a shorter block than the one in
 * force included, or lifts its block when `untilMs` is not ahead of now
 * (the burst then comes back at its rate, as when a block ends): how a
 * block the fleet agreed on is made so here, where the fleet's entry, not
 * the longest block seen, is what holds.
 *
 * @param target The class, key and instant (on the `nowMs` clock).
 * @param nowMs The time, ms.
 * @returns Whether the key's state changed.
 * @throws {TypeError} when `key` is not a non-empty string.
 */
export function blockUntil(
  enforcer: Enforcer,
  target: { className: string; key: string; untilMs: number },
  nowMs: number,
): boolean {
  const blocking = target.untilMs > nowMs;
  const at = enforcer.slotAt(target.className, target.key, nowMs, blocking);
  if (at === undefined) return false;
  const { slot, nowUs } = at;
  if (blocking) {
    blockSlot(slot, nowUs + Math.ceil((target.untilMs - nowMs) * US_PER_MS));
  } else {
    if (slot.atUs <= nowUs) return false;
    blockSlot(slot, nowUs);
  }
  enforcer.holdBlock(slot, nowMs);
  return true;
}

/** The whole burst owed as of `untilUs`: denied until then. */
function blockSlot(slot: { debt: number; atUs: number; rule: Rule }, untilUs: number): void {
  slot.debt = slot.rule.toleranceUnits;
  slot.atUs = untilUs;
}

/**
 * How long the key stays blocked, ms; 0 when it is not.
 *
 * @throws {TypeError} when `key` is not a non-empty string.
 */
export function blockedForMs(
  enforcer: Enforcer,
  className: string,
  key: string,
  nowMs: number,
): number {
  const at = enforcer.slotAt(className, key, nowMs, false);
  return at === undefined || at.slot.atUs <= at.nowUs ? 0 : usToMs(at.slot.atUs - at.nowUs);
}
