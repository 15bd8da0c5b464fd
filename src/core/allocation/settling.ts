/**
 * The allocator's settling rules: how long news takes to cross the fleet
 * ({@link settleTimeMs}), and what runs until it has. A node that has just
 * joined, or is back from a minority, is learning: its peers' figures of it
 * are stale, and so are its of them, and it holds every key at the floor,
 * as it does while joining, without quorum, with its member table full or
 * failed ({@link NodeHolds}). A key that has just turned hot here, or woken
 * here, runs at a settling share until its peers' reports of it have had
 * time to arrive ({@link settlingShare}, {@link wake}), and with a shared
 * burst the others reckon a member that has just joined at that share, not
 * at its demand ({@link joiners}).
 *
 * @module
 */

import { COOL_FRACTION, type HotKey } from "./hot_key.ts";
import { demandIn, type HeardReport, madeMsOf } from "./heard.ts";
import type { CountedMembers, Headcount } from "./members.ts";

/** Why every key is held at the floor, if it is. */
export interface Holds {
  /** Configured with seeds, and no peer ever reached (membership's `joining`). */
  readonly joining: boolean;
  /** A newcomer was refused for a full member table lately. */
  readonly membersFull: boolean;
  /** The member table's bound, N's least value while full. */
  readonly maxMembers: number;
}

/**
 * Rounds a member that has just joined, or a key that has just turned hot,
 * waits on top of log2 N before it trusts the sums: one to send, one to be
 * answered, one of slack for a lost datagram.
 */
const SETTLE_ROUNDS = 3;

/**
 * How long news takes to reach every peer: a round to send, and about
 * log2 N more by relay, for `inSight` members in sight. A node that has just
 * joined, or a key that has just turned hot, waits that long before it
 * trusts the sums.
 */
export function settleTimeMs(periodMs: number, inSight: number): number {
  return periodMs * (SETTLE_ROUNDS + Math.ceil(Math.log2(inSight + 1)));
}

/** Whether every key is held at the floor, and why: the node's holds, tick by tick. */
export class NodeHolds {
  #joinedAtMs: number | undefined;
  #quorumAtMs = -Infinity;
  #failed = false;
  // Held until the first update says otherwise: a check before it knows
  // nothing of the fleet, and must not spend the fleet's limit.
  #held = true;
  #learning = false;
  #lean = true;

  /** Whether every key is held at the floor now. */
  get held(): boolean {
    return this.#held;
  }

  /** Peers have not yet heard this node's demand. */
  get learning(): boolean {
    return this.#learning;
  }

  /** New keys start lean (joining, learning). */
  get lean(): boolean {
    return this.#lean;
  }

  /** From the next update on, holds every key: the node's background task has died. */
  fail(): void {
    this.#failed = true;
  }

  /** The holds at `nowMs`, from membership's `holds` and the count `view`; news settles in `settleMs`. */
  update(nowMs: number, holds: Holds, view: Headcount, settleMs: number): void {
    // Joining holds only a node that has never reached a peer (membership
    // keeps it so): one whose peers all went away is not new, and its
    // partition policy decides.
    const joining = holds.joining;
    if (joining) this.#joinedAtMs = undefined;
    else this.#joinedAtMs ??= nowMs;
    // Learning: until peers have had time to hear this node's demand, by
    // direct exchange and relay, which takes about log2 N rounds.
    // A node back from a minority is like a newcomer: its peers' figures of
    // it are stale, and so are its of them.
    if (view.withoutQuorum) this.#quorumAtMs = Infinity;
    else if (this.#quorumAtMs === Infinity) this.#quorumAtMs = nowMs;
    const since = Math.max(
      this.#joinedAtMs ?? Infinity,
      this.#quorumAtMs === Infinity ? -Infinity : this.#quorumAtMs,
    );
    this.#learning = this.#joinedAtMs !== undefined && view.inSight > 1 &&
      nowMs - since < settleMs;
    this.#held = joining || this.#learning || view.withoutQuorum || holds.membersFull ||
      this.#failed;
    this.#lean = joining || this.#learning;
  }
}

/**
 * A settling hot key's share, given the split's. With a shared burst, the
 * fair share R/N, which N nodes cannot pass between them, whatever the
 * split says: in a fleet forming its sums, a node's own figure and its
 * peers' are of different moments, the split of a node whose demand is far
 * above R/N fell below it, and a fleet of 200 admitted 0.91 R in the
 * second after traffic started. With a burst on each node, at most the
 * cold share (α of R/N) for a key new here, whose headroom below R takes
 * the bursts every node spends when traffic starts; at most R/N for a key
 * that woke, whose peers hold it hot already and do not all wake at once:
 * held at its cold share, a fleet of 20 fell to 0.55 R after a jump.
 */
export function settlingShare(
  hot: HotKey,
  share: number,
  limitPerSec: number,
  n: number,
  shared: boolean,
  alpha: number,
): number {
  if (shared) return limitPerSec / n;
  return Math.min(share, (limitPerSec * (hot.woke ? 1 : alpha)) / n);
}

/**
 * A hot key whose demand here sank below the cool point (hot only for its
 * peers' demand) and has risen to its cold share again settles afresh, as
 * a key that has just turned hot: its own figure rises at once, its peers'
 * only as their reports come, and a peer whose key was cold names nothing
 * and counts for none. When a key hot at 1% of its load jumps 100×, the
 * nodes that held it hot before took several times R/N for a second or
 * two, and a fleet of 100 offered a request a second an instance held
 * shares adding up to 1.39 R.
 */
export function wake(hot: HotKey, coldShare: number, nowMs: number, settleMs: number): void {
  if (hot.demand < COOL_FRACTION * coldShare) hot.quiet = true;
  else if (hot.quiet && hot.demand >= coldShare) {
    hot.quiet = false;
    hot.woke = true;
    hot.settlingUntilMs = Math.max(hot.settlingUntilMs, nowMs + settleMs);
  }
}

/** The members reckoned at their settling share R/N for a key ({@link joiners}). */
export interface Joiners {
  /** How many are reckoned at R/N. */
  readonly count: number;
  /** Those of them whose reports name the key: counted in the sums, to take out. */
  readonly named: number;
  /** Their demand in those reports. */
  readonly demand: number;
}

/** No member reckoned at its settling share. */
export const NO_JOINERS: Joiners = { count: 0, named: 0, demand: 0 };

/**
 * The members that have just joined (as membership told this node) and run
 * the key hot at their settling share, R/N with a shared burst: a newcomer
 * is held while it learns, and its hot key settles at R/N whatever its
 * demand. Summed at their demand instead, which rises from nothing in their
 * first reports (or at none, while no report of theirs has come), they left
 * the others their whole shares: a hundred joining a fleet of a hundred
 * took R/N each beside the old members' R, and the fleet admitted 1.45 R
 * for a second, 1.24 R the next. Reckoned at R/N, they leave the others R
 * less their part, to split by demand as before.
 *
 * A newcomer learns for `settleMs` from its first tick after its join was
 * answered, and a key that turns hot there a tick or two later settles
 * until `settleMs` after that: reckoned so from when this node heard of it,
 * for `settleMs` and two periods more. It counts while it has run fewer
 * rounds than that, too (its reports say its round): a member this node
 * heard of late, once past its own join, is no newcomer. A newcomer whose
 * report does not name the key made it, most likely, before its first
 * request of it (a node joins before its traffic comes): it is reckoned at
 * R/N too, as one of which no report has come. Counted at its report's
 * nothing, or at the mean of the others, it left the old members shares
 * above their part, and a fleet of 200 admitted 1.05 R for the second
 * second; one that has no demand of the key leaves its R/N unused for as
 * long as it learns.
 */
export function joiners(
  members: CountedMembers,
  reports: { get(key: string): HeardReport | undefined },
  id: number,
  at: { readonly nowMs: number; readonly periodMs: number; readonly settleMs: number },
): Joiners {
  const { nowMs, periodMs } = at;
  const learnsMs = at.settleMs + 2 * periodMs;
  let count = 0, named = 0, demand = 0;
  for (const key of members.joinedSince(nowMs - learnsMs)) {
    const report = reports.get(key);
    if (report && report.round * periodMs + (nowMs - madeMsOf(report)) >= learnsMs) continue;
    count++;
    const d = report && demandIn(report, id);
    if (d === undefined) continue;
    named++;
    demand += d;
  }
  return { count, named, demand };
}
