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
 * A key that settles at the fair share R/N with a shared burst spends, as
 * it leaves it, the slack its admissions left unspent. There each node's
 * part of the burst is about a request and a half, and requests that come
 * on a grid of their own can leave the slack whole: at two a second
 * against a share of one, each admission finds the debt just paid off, and
 * a move earlier is lost in a full bucket. When the shares then leave R/N,
 * a little above on some nodes and a little below on others, each node
 * whose share rose spent its slack on its next request while each whose
 * share fell lived on its own for seconds: a fleet of 1000 admitted 1.29 R
 * in that second. So from when such a key first runs dry, a node notes the
 * least its admissions find owed (read at its ticks, from the debt the last
 * one left) and moves its grid no more; as the key leaves the fair share,
 * it moves the grid later to leave four fifths to all of the slack owed,
 * by its offset, and then by its offset again, as when it first ran dry,
 * so that the grids that rule lined up are spread again. A node whose
 * slack lay unspent loses no admission to it, and one whose requests come
 * too often to leave any (its admissions find about the slack owed) moves
 * by its offset only.
 *
 * @module
 */

import type { Enforcer } from "../enforcer.ts";
import type { Hash64 } from "../hash.ts";
import type { Slot } from "../keytable.ts";
import { MIN_SHARED_BURST } from "../rule.ts";

/** The slack of the least shared burst, in requests: what a node at R/N may leave unspent. */
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
  /**
   * Whether the key settles at the fair share and has run dry there since:
   * from then on, what its admissions find is noted (see the module doc).
   */
  watching: boolean;
  /** While watching, the least an admission found owed, in requests; `Infinity` before any. */
  leastOwed: number;
  /** The slot's admissions (requests less denials) when last looked at. */
  seenAdmitted: number;
  /** The slot's instant when last looked at: one moved since is an admission's. */
  seenAtUs: number;
}

/** A key's phase on the node `self`: its offset drawn from both. */
export function phaseOf(self: { readonly hi: number; readonly lo: number }, key: Hash64): Phase {
  // Any well-mixed draw will do: nodes' IDs are random, and so are key hashes.
  let x = Math.imul(self.lo ^ key.lo, 0x9e3779b1) ^ Math.imul(self.hi ^ key.hi, 0x85ebca77);
  x = Math.imul(x ^ (x >>> 15), 0xc2b2ae3d);
  x ^= x >>> 13;
  return {
    offset: (x >>> 0) / 2 ** 32 - 0.5,
    seenDenied: 0,
    armed: true,
    pending: 0,
    watching: false,
    leastOwed: Infinity,
    seenAdmitted: 0,
    seenAtUs: -Infinity,
  };
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
  if (settling && ranDry && !phase.watching) {
    // What a burst's admissions found, from a full bucket, says nothing of
    // what the grid's will.
    phase.watching = true;
    phase.leastOwed = Infinity;
  }
  if (phase.armed && ranDry) {
    phase.armed = false;
    phase.pending = phase.offset;
  } else if (!phase.armed && !ranDry && !phase.watching && enforcer.slotRefilled(slot, nowMs)) {
    // Not while watching: there a bucket that refills before each admission
    // is a grid earlier than its requests, and moved again it would change
    // what the next admission finds, not when it comes.
    phase.armed = true;
    phase.pending = 0;
  }
  if (!settling && phase.watching) {
    // Leaving the fair share: moved later to owe four fifths to all of the
    // slack at the next admission, by the node's offset.
    const keep = SLACK * (0.8 + 0.2 * (phase.offset + 0.5));
    // A move earlier still pending is one a full bucket kept from being
    // made: made now, it would give back the slack this move spends.
    if (phase.leastOwed !== Infinity) {
      phase.pending = Math.max(0, phase.pending) + Math.max(0, keep - phase.leastOwed);
    }
    // And by its offset again: the move above sets each node's grid by what
    // its own admissions found, the same rule on every node, and lined the
    // fleet's grids up again. At a share that is not a whole number of
    // requests a second, a fleet in step swings by the beat of its
    // interval against the second: 199 nodes offered twice their share
    // spent 7 to 12 s over 1.01 R after a node joined (docs/accuracy.md).
    phase.pending += phase.offset;
    phase.watching = false;
  }
  if (phase.pending !== 0) {
    const moved = enforcer.shiftSlot(slot, phase.pending, nowMs);
    phase.pending -= moved;
    // The next admission finds the debt moved too (no less than nothing).
    if (phase.watching) phase.leastOwed = Math.max(0, phase.leastOwed + moved);
  }
  // What rounding to whole units leaves is no move at all.
  if (Math.abs(phase.pending) < 1e-9) phase.pending = 0;
  phase.seenAtUs = slot.atUs;
}

/**
 * At a tick, before the slot takes its new share: while the phase watches
 * (see the module doc), notes what the key owed before its last admission,
 * if one came since the last tick. An admission leaves the debt, as of its
 * instant, one request above what it found.
 */
export function watchPhase(phase: Phase, slot: Slot): void {
  const admitted = slot.requests - slot.denied;
  if (phase.watching && admitted !== phase.seenAdmitted && slot.atUs !== phase.seenAtUs) {
    const found = slot.debt / slot.rule.unitsPerRequest - 1;
    if (found >= 0) phase.leastOwed = Math.min(phase.leastOwed, found);
  }
  phase.seenAdmitted = admitted;
}
