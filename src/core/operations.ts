/**
 * What a caller does to one key besides checking it, as it moves the key's
 * GCRA state: give back what a check took (refund), forget its state
 * (reset), or shut it out for a while (block). The {@link Enforcer} owns
 * every slot: its methods (`refund`, `reset`, `block`, `blockUntil`,
 * `blockedForMs`) find the slot and keep the block set, and call these to
 * move the slot's state; nothing else imports this module (the layout test
 * says so). None of them adds work to the request path: the next check reads
 * the state they leave as it reads any other.
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

import { owedAt } from "./gcra.ts";
import type { Slot } from "./keytable.ts";
import { describe } from "./describe.ts";
import { MAX_COST } from "./limit.ts";

/** The longest block, ms: a year. */
export const MAX_BLOCK_MS = 365 * 86_400_000;

/** @throws {RangeError} when `cost` is not a whole number from 1 to `MAX_COST`. */
export function checkRefundCost(cost: number): void {
  if (!Number.isInteger(cost) || cost < 1 || cost > MAX_COST) {
    throw new RangeError(
      `refund: cost must be a whole number from 1 to ${MAX_COST}, got ${describe(cost)}`,
    );
  }
}

/** @throws {RangeError} when `ms` is not a number from 0 (exclusive) to `MAX_BLOCK_MS`. */
export function checkBlockMs(ms: number): void {
  if (typeof ms !== "number" || !(ms > 0) || !(ms <= MAX_BLOCK_MS)) {
    throw new RangeError(
      `block: ms must be a number above 0 and at most ${MAX_BLOCK_MS} (a year), got ${
        describe(ms)
      }`,
    );
  }
}

/**
 * Gives back `cost` requests: the debt comes down by them, to nothing at
 * most, the shadow's too. Nothing for a blocked slot or one that owes nothing.
 *
 * @returns Whether the slot's state changed.
 */
export function refundSlot(slot: Slot, cost: number, nowUs: number): boolean {
  if (slot.atUs > nowUs) return false;
  const owed = owedAt(slot.debt, slot.atUs, slot.rule, nowUs);
  if (owed === 0) return false;
  slot.debt = Math.max(0, owed - cost * slot.rule.unitsPerRequest);
  slot.atUs = nowUs;
  const shadow = slot.rule.shadow, s = slot.shadow;
  if (shadow !== undefined && s !== undefined && s.atUs <= nowUs) {
    s.debt = Math.max(0, owedAt(s.debt, s.atUs, shadow, nowUs) - cost * shadow.unitsPerRequest);
    s.atUs = nowUs;
  }
  return true;
}

/**
 * Forgets what the slot owes, a block included: it stands as a new key's
 * would (one request of its burst when `lean`, else all of it), with no shadow state.
 */
export function resetSlot(slot: Slot, lean: boolean, nowUs: number): void {
  slot.lean = lean;
  slot.debt = lean ? slot.leanDebt() : 0;
  slot.atUs = nowUs;
  if (slot.shadow !== undefined) slot.shadow = undefined;
}

/** The whole burst owed as of `untilUs`: denied until then (lifted when `untilUs` is now). */
export function blockSlot(slot: Slot, untilUs: number): void {
  slot.debt = slot.rule.toleranceUnits;
  slot.atUs = untilUs;
}
