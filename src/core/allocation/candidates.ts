/**
 * The allocator's candidate queue: keys the request path saw nearing their
 * cold share, waiting for the allocator's next tick to coordinate them with
 * the peers. The request path only nominates (a flag test and a push); the
 * allocator takes the whole queue once a tick and decides. The queue is
 * bounded, so a flood of distinct keys costs a fixed amount between ticks,
 * and a key is queued once however often it is checked (its slot's
 * `candidate` flag, which the queue owns).
 *
 * @module
 */

import type { Slot } from "../keytable.ts";
import type { Rate } from "../gcra.ts";
import { GUARD_BOUNDS } from "../options.ts";

/** Keys nearing their cold share queued at most between two ticks. */
export const MAX_CANDIDATES = 256;

// A private copy for nearsColdShare, which runs on checks in a fleet: Node
// reads an exported constant at each use (see time.ts).
const NOMINATE = 0.5;

/**
 * A key owing more than this fraction of its burst is spending at about its
 * rate: nearing its cold share, it is nominated to be coordinated. Lower
 * nominates keys sooner (more of the hot set spent on keys that stay cold);
 * 1 would wait until the burst is gone.
 */
export const NOMINATE_FRACTION: number = NOMINATE;

// Relations the constants above must keep, checked when the module loads.
if (MAX_CANDIDATES < GUARD_BOUNDS.hotKeys.max) {
  throw new Error("candidates: a tick's candidates must be able to fill the largest hot set");
}
if (!(NOMINATE_FRACTION > 0 && NOMINATE_FRACTION < 1)) {
  throw new Error("candidates: NOMINATE_FRACTION must be in (0, 1)");
}

/**
 * Whether a key left owing `debt` units by an admission under `rate` is
 * nearing its cold share: it owes more than {@link NOMINATE_FRACTION} of
 * its burst.
 *
 * @param debt The debt after the admission, in the rate's units.
 * @param rate The rate the key runs under.
 * @returns Whether to nominate the key.
 */
export function nearsColdShare(debt: number, rate: Rate): boolean {
  return debt > NOMINATE * rate.toleranceUnits;
}

/** Keys nominated since the allocator's last tick, each once, at most {@link MAX_CANDIDATES}. */
export class CandidateQueue {
  #queued: Slot[] = [];

  /** Slots queued now. */
  get size(): number {
    return this.#queued.length;
  }

  /**
   * Queues `slot` for the allocator, unless it is hot already (the
   * allocator has it) or the queue is full (a later check nominates it
   * again). A slot already queued has `candidate` set: callers test that
   * first, so that a queued key costs one flag test a check.
   *
   * @param slot The key's slot.
   */
  nominate(slot: Slot): void {
    if (slot.hot !== undefined || this.#queued.length >= MAX_CANDIDATES) return;
    slot.candidate = true;
    this.#queued.push(slot);
  }

  /**
   * The keys nominated since the last call, in order; each may be nominated
   * again from now on.
   *
   * @returns The queued slots; the queue is then empty.
   */
  take(): Slot[] {
    const taken = this.#queued;
    this.#queued = [];
    for (const slot of taken) slot.candidate = false;
    return taken;
  }
}
