/**
 * The phase of a hot key's admissions on this node, spread from its peers'.
 *
 * A node whose demand for a key is above its share admits one request each
 * interval 1/share, at instants fixed by when its bucket ran dry: an
 * admission that comes late, waiting for a request to arrive, is credited,
 * so the grid of instants never drifts. When traffic starts or jumps every
 * node runs dry at about the same moment, and identical nodes get identical
 * shares: the fleet then admits in waves, every node at once, once an
 * interval. At 200 nodes and R = 1000 a second that is a wave of 200
 * requests every 207 ms, and a second holds four or five of them: the fleet
 * swung between about 0.93 and 1.03 R for tens of seconds, its shares adding
 * up to R all the while, until the nodes' small differences of share drifted
 * them apart.
 *
 * So when a key's bucket runs dry here (its first denial since it was last
 * seen refilled), this node moves its grid by a fraction of an interval of
 * its own, drawn from its ID and the key, between half an interval earlier
 * and half later: across the fleet the waves spread evenly over the
 * interval, and the moves cancel out in the fleet's sum. A move later
 * waits for room under the burst, a tick or two.
 *
 * A key settling at the fair share R/N with a shared burst moves later
 * only, by most of its slack. There every node's part of the burst
 * is about a request and a half and its requests come on a grid of their
 * own: at two a second against a share of one, each admission finds the
 * debt just paid off, a move earlier is lost in a full bucket, and the node
 * keeps half a request of slack unspent. When the settling ends and shares
 * leave R/N, a little above on some nodes and a little below on others,
 * every node whose share rose spent that slack on its next request, while
 * a node whose share fell lived on its own for seconds: a fleet of 1000
 * admitted 1.29 R in that second. Moved later by most of its slack, which
 * costs a node whose slack lay unspent nothing, each node meets its new
 * share with a tenth of a request to spare, and the fleet admits what the
 * shares add up to (moved by up to half, 1.06 R for two seconds).
 *
 * @module
 */

import type { Enforcer } from "../enforcer.ts";
import type { Hash64 } from "../hash.ts";
import type { Slot } from "../keytable.ts";
import { MIN_SHARED_BURST } from "../rule.ts";

/**
 * The slack of the least shared burst, in intervals: what a node settling
 * at the fair share keeps unspent (see the module doc). A settling key's
 * move takes from four fifths of it to all of it, spread by the node's
 * offset, and so never costs a node whose slack lay unspent an admission.
 */
const SLACK = MIN_SHARED_BURST - 1;

/** A hot key's phase, as {@link spreadPhase} keeps it. */
export interface Phase {
  /** The offset of this node's grid for the key, in intervals, in [-1/2, 1/2). */
  readonly offset: number;
  /** The slot's denials when last looked at. */
  seenDenied: number;
  /** Whether the bucket has refilled since the grid was last moved: the next run dry moves it. */
  armed: boolean;
  /** The part of the move still to make, in intervals (a move later waits for room). */
  pending: number;
}

/** A key's phase on the node `self`: its offset drawn from both. */
export function phaseOf(self: { readonly hi: number; readonly lo: number }, key: Hash64): Phase {
  // Any well-mixed draw will do: nodes' IDs are random, and so are key hashes.
  let x = Math.imul(self.lo ^ key.lo, 0x9e3779b1) ^ Math.imul(self.hi ^ key.hi, 0x85ebca77);
  x = Math.imul(x ^ (x >>> 15), 0xc2b2ae3d);
  x ^= x >>> 13;
  return { offset: (x >>> 0) / 2 ** 32 - 0.5, seenDenied: 0, armed: true, pending: 0 };
}

/**
 * Brings a hot key's phase up to date at a tick (see the module doc);
 * `settling` while the key settles at the fair share with a shared burst.
 */
export function spreadPhase(
  phase: Phase,
  slot: Slot,
  enforcer: Enforcer,
  nowMs: number,
  settling = false,
): void {
  const ranDry = slot.denied !== phase.seenDenied;
  phase.seenDenied = slot.denied;
  if (phase.armed && ranDry) {
    phase.armed = false;
    phase.pending = settling ? SLACK * (0.8 + 0.2 * (phase.offset + 0.5)) : phase.offset;
  } else if (!phase.armed && !ranDry && enforcer.slotRefilled(slot, nowMs)) {
    phase.armed = true;
    phase.pending = 0;
  }
  if (phase.pending !== 0) phase.pending -= enforcer.shiftSlot(slot, phase.pending, nowMs);
  // What rounding to whole units leaves is no move at all.
  if (Math.abs(phase.pending) < 1e-9) phase.pending = 0;
}
