/**
 * The members as allocation counts them: who shares the limit (N), whose
 * demand is summed, and whether this node sees a quorum. The partition
 * policy decides what a member lost from sight still counts for. Also
 * here: the members that have just joined, which settle at R/N while they
 * learn and are reckoned so by the others (settling.ts, `joiners`).
 *
 * @module
 */

import type { MemberChange } from "../membership/extension.ts";
import type { PartitionPolicy } from "../partition.ts";

/** What allocation remembers of a peer. */
interface PeerState {
  /** What membership last said of it. */
  state: "alive" | "suspect" | "dead" | "left";
  /** Since when, in this node's time. */
  sinceMs: number;
  /** Which life of it membership last named; 0 when none did. */
  life: number;
}

/** What allocation knows of a peer (its state, since when, which life), read-only. */
export type PeerStatus = Readonly<PeerState>;

/** The life of `p` while it is alive or suspect (0 when none was named); else undefined. */
export function lifeIfLive(p: PeerStatus | undefined): number | undefined {
  return p && (p.state === "alive" || p.state === "suspect") ? p.life : undefined;
}

/** The cluster counted at one moment: N, who is in sight, the quorum, whose demand counts. */
export interface Headcount {
  /** N: the members the limit is shared over, this node included. */
  readonly countedSize: number;
  /**
   * Members in sight, this node included: alive ones and, but under
   * Optimistic, suspects, which keep their standing until declared dead.
   */
  readonly inSight: number;
  /** Under Quorum, whether this node sees no strict majority of the members it knows. */
  readonly withoutQuorum: boolean;
  /** Whether a peer's demand counts in the sums. */
  counts(id: string): boolean;
}

/** Members by their ID's string, as allocation sees them. */
export class CountedMembers {
  readonly #peers = new Map<string, PeerState>();
  readonly #policy: PartitionPolicy;
  /**
   * Peers not alive (suspect, dead or left): the few a view must look at
   * one by one. Counts of the rest are kept as they change, so that a view
   * costs the handful of members in trouble, not the whole fleet, at every
   * tick of a thousand-node fleet.
   */
  readonly #notAlive = new Set<string>();
  /**
   * Members that have just joined as this node sees them (first heard of
   * alive, or alive in a new life), with when: a few, but for a mass join,
   * each forgotten here once past its settling ({@link joinedSince}).
   */
  readonly #joined = new Map<string, number>();
  #alive = 0;
  #suspect = 0;
  #left = 0;

  /** Members counted under `policy`. */
  constructor(policy: PartitionPolicy) {
    this.#policy = policy;
  }

  /**
   * Takes news from membership.
   *
   * @returns Whether the member is another life than the one known before:
   *   a process started again at its address, whose figures start afresh.
   */
  apply(change: MemberChange): boolean {
    const id = change.member.id.toString();
    const state = change.member.state;
    const known = this.#peers.get(id);
    if (state === "forgotten") {
      if (known) this.#count(id, known.state, -1);
      this.#peers.delete(id);
      this.#joined.delete(id);
      return false;
    }
    const life = change.member.life ?? known?.life ?? 0;
    const renewed = known !== undefined && known.life !== 0 && life !== known.life;
    if (known) known.life = life;
    if (state === "alive" && (known === undefined || renewed)) {
      // Kept in the order they joined, so that those past are found first.
      this.#joined.delete(id);
      this.#joined.set(id, change.nowMs);
    } else if (state !== "alive" && state !== "suspect") this.#joined.delete(id);
    if (known?.state === state) return renewed;
    if (known) this.#count(id, known.state, -1);
    this.#count(id, state, 1);
    // Suspicion is not loss: a suspect keeps its standing (and the time it
    // was last alive) until it is declared dead.
    if (known && state === "suspect" && known.state === "alive") {
      known.state = state;
      return renewed;
    }
    if (known) {
      known.state = state;
      known.sinceMs = change.nowMs;
    } else this.#peers.set(id, { state, sinceMs: change.nowMs, life });
    return renewed;
  }

  /**
   * The member `id` as allocation knows it, if it does: the same object,
   * kept up to date, until membership forgets the member; {@link liveLife}
   * reads it.
   */
  peer(id: string): PeerStatus | undefined {
    return this.#peers.get(id);
  }

  /**
   * The life membership names for the member `id` while it is alive or
   * suspect (0 when none was named), or undefined when it is not: dead,
   * departed or unknown.
   */
  liveLife(id: string): number | undefined {
    return lifeIfLive(this.#peers.get(id));
  }

  /**
   * The members that joined, as this node heard, since `sinceMs`, by ID
   * string; those that joined earlier are forgotten here for good.
   */
  joinedSince(sinceMs: number): IterableIterator<string> {
    for (const [id, atMs] of this.#joined) {
      if (atMs >= sinceMs) break;
      this.#joined.delete(id);
    }
    return this.#joined.keys();
  }

  /** The peers that are not alive, by ID string: the only ones a view may not count. */
  notAlive(): ReadonlySet<string> {
    return this.#notAlive;
  }

  /** The view at `nowMs`. */
  view(nowMs: number): Headcount {
    const policy = this.#policy;
    const holdDown = policy.kind === "holdDown";
    // Optimistic takes a suspect's share at once; HoldDown and Quorum keep
    // it out of use until the suspect is declared dead, so that the minority
    // of a split, which loses its quorum on suspicion alone, has stopped
    // before the majority takes what it leaves.
    const keepsSuspects = policy.kind !== "optimistic";
    const sees = (p: PeerState) => p.state === "alive" || (keepsSuspects && p.state === "suspect");
    const holds = (p: PeerState) =>
      holdDown && p.state === "dead" && nowMs - p.sinceMs < policy.holdMs;
    const peers = this.#peers;
    let held = 0;
    if (holdDown) {
      for (const id of this.#notAlive) if (holds(peers.get(id)!)) held++;
    }
    const alive = 1 + this.#alive;
    const inSight = alive + (keepsSuspects ? this.#suspect : 0);
    const known = 1 + peers.size - this.#left;
    // A quorum needs a majority of the known members alive: a suspect does
    // not vouch for one. Counting suspects, the minority of a split would
    // keep its shares until the suspicions ran out, while the majority,
    // whose suspicions end sooner (more members confirm them), already
    // took the freed share.
    const withoutQuorum = policy.kind === "quorum" && 2 * alive <= known;
    return {
      // Without a quorum the floor is split over every member known, lost
      // ones included: the minority's floors are the ε of "R + ε".
      countedSize: withoutQuorum ? known : inSight + held,
      inSight,
      withoutQuorum,
      counts(id: string): boolean {
        const p = peers.get(id);
        return p !== undefined && (sees(p) || holds(p));
      },
    };
  }

  #count(id: string, state: PeerState["state"], by: 1 | -1): void {
    if (state === "alive") this.#alive += by;
    else if (by > 0) this.#notAlive.add(id);
    else this.#notAlive.delete(id);
    if (state === "suspect") this.#suspect += by;
    if (state === "left") this.#left += by;
  }
}
