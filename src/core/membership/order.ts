/**
 * The order in which a node probes: SWIM's round-robin over its members,
 * shuffled each round, except that once a node has proven enough members
 * it probes those it can reach directly and leaves the others, strangers,
 * for later rounds, one every few dozen periods.
 *
 * Why: a member only heard of has sent nothing to pay for a ping, so it is
 * probed through a helper, and the two prove each other on the way (`gate.ts`):
 * eight datagrams where a ping costs two, sixteen while news waits. With
 * every member in every round, a fleet of a thousand spent its first round,
 * 200 s, almost entirely on such probes, at 6.5 datagrams a node a period.
 * SWIM needs every member probed by someone about once a period, not by
 * everyone once a round: a member that has proven `d` others is probed by
 * those `d`, each every `d` periods or so. So a node probes strangers
 * freely until it has proven `wantedDegree` members (3 log2 N; a few
 * seconds of forming, as the strangers it probes and those that probe it
 * both count), then only its proven members, and a stranger (or a seed,
 * which is every member's first helper already) only every
 * `STRANGER_EVERY · wantedDegree` periods. A node whose proven members die
 * or leave falls below and probes strangers again.
 *
 * @module
 */

import type { Prng } from "../prng.ts";
import type { Member } from "./table.ts";

/** What the order reads from its node. */
export interface OrderHost {
  /** Every member held. */
  live(): Iterable<Member>;
  /** Whether `member` may be pinged directly and is not a seed. */
  known(member: Member): boolean;
  /** Members proven (seeds are not counted: they are open to all). */
  provenCount(): number;
}

/** Once enough are proven, a stranger is probed every this many times `wantedDegree` periods. */
const STRANGER_EVERY = 4;

/**
 * Up to this many members a node probes in plain round-robin: a round of
 * 256 lasts 51 s at 200 ms, where a thousand's lasts 200 s. At 64, a fleet
 * of 200 sent 2.06 datagrams a node a period from the tenth second (5.73
 * at 256). The row that kept it here then, the 100x jump at 200 instances,
 * holds at 64 now (3 s over 1.01 R, 5 at 256). The demand reports held at
 * 200 are as old under either order once the fleet has formed (2.0 s at
 * the median, 3.0 s at the 90th percentile, 9% past belief: the relay's
 * pace); round-robin's first round, 40 s, is fresher (1.0 s at the median
 * 20 s in) only because nearly every probe goes through the seed, whose
 * pings for others carry every report a hop from its origin. What breaks
 * at 64 is two region rows at 200: the follow-the-sun shift
 * (`regions-sun-200`) settled in 10 s against its bound of 3, with 2 false
 * deaths against none; and region C cut off, under each policy
 * (`region-cut-optimistic-200` and the others), held 1.20, 1.19 and
 * 0.81 R once healed, against R + 3% (1.02, 1.00, 1.00 R at 256): the
 * members of C, dead to the others during the cut,
 * are strangers to them after it, and a node with its proven members left
 * probes a stranger only every `STRANGER_EVERY · wantedDegree` periods
 * (18 s at 200). Open.
 */
const ROUND_ROBIN_MEMBERS = 256;

/**
 * The members a node proves before it leaves strangers for later: 3 log2
 * N of its `members` (30 at a thousand); none up to
 * `ROUND_ROBIN_MEMBERS`.
 *
 * @param members Live members held, this node excluded.
 * @returns How many proven members let a node probe strangers rarely.
 */
export function wantedDegree(members: number): number {
  return members > ROUND_ROBIN_MEMBERS ? Math.ceil(3 * Math.log2(members + 1)) : Infinity;
}

function isLive(member: Member): boolean {
  return member.state === "alive" || member.state === "suspect";
}

/** One node's probe order. */
export class ProbeOrder {
  readonly #prng: Prng;
  readonly #periodMs: number;
  readonly #host: OrderHost;
  #members: Member[] = [];
  #cursor = 0;
  #lastStrangerMs = -Infinity;

  /**
   * @param prng The node's generator.
   * @param periodMs The protocol period.
   * @param host The node.
   */
  constructor(prng: Prng, periodMs: number, host: OrderHost) {
    this.#prng = prng;
    this.#periodMs = periodMs;
    this.#host = host;
  }

  /** The members of the current round, live or not: helpers are drawn from them. */
  get members(): readonly Member[] {
    return this.#members;
  }

  /** A member to probe in this round: inserted at a random place among those still to come. */
  add(member: Member): void {
    const at = this.#cursor + this.#prng.below(this.#members.length - this.#cursor + 1);
    this.#members.splice(at, 0, member);
  }

  /** A random member of the current round, live or not, if any. */
  random(): Member | undefined {
    const members = this.#members;
    return members.length === 0 ? undefined : members[this.#prng.below(members.length)];
  }

  /** The member to probe at `nowMs`, if any is live. */
  next(nowMs: number): Member | undefined {
    const host = this.#host;
    const wanted = wantedDegree(this.#members.length);
    const strangerDue = nowMs - this.#lastStrangerMs >= STRANGER_EVERY * wanted * this.#periodMs;
    const choosy = !strangerDue && host.provenCount() >= wanted;
    // Choosy, the rest of this round and one round more are read for a known member.
    for (let fresh = false;;) {
      if (this.#cursor >= this.#members.length) {
        if (fresh) break;
        fresh = true;
        this.#members = this.#prng.shuffle([...host.live()].filter(isLive));
        this.#cursor = 0;
        if (this.#members.length === 0) return undefined;
      }
      const member = this.#members[this.#cursor++];
      if (!isLive(member)) continue;
      const known = host.known(member);
      if (known && choosy) return member;
      if (!choosy) {
        if (!known) this.#lastStrangerMs = nowMs;
        return member;
      }
    }
    // Nobody this node can reach directly (its proven members all gone meanwhile).
    this.#lastStrangerMs = nowMs;
    return this.#members.find(isLive);
  }
}
