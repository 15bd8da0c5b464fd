/**
 * The demand reports this node holds of its peers: which it takes, for how
 * long it believes them, and which it passes on.
 *
 * A report is taken only for an origin membership holds alive or suspect,
 * of the life membership names, and is believed for
 * `REPORT_BELIEVED_PERIODS` from when its origin made it. Within a life a
 * later round replaces an earlier one; a report past its believed time is
 * replaced by any younger one of the life, and one that old is neither
 * taken nor passed on. Relays pass a report on older by the time they held
 * it, so a forgery at the highest round, which no real report can pass,
 * dies everywhere within that time; a report that ran out so is never taken
 * again (a copy of it delayed in the network, say).
 *
 * Each key's sums over the reports held are `demand_totals.ts`'s, kept as
 * reports are taken and forgotten here; which reports are passed on is
 * `relay.ts`'s.
 *
 * @module
 */

import { memberIdText } from "../../proto/member_id.ts";
import { type Demand, DemandTotals, grown, type OwnDemandAt } from "./demand_totals.ts";
import { HeldRows, type ReportRow } from "./held_rows.ts";
import { type CountedMembers, type Headcount, lifeIfLive, type PeerStatus } from "./members.ts";
import { Relay } from "./relay.ts";
import type { GroupReader, RelayedGroup } from "./report.ts";

/** What this node holds of one origin: its latest report and when it came. */
export interface HeardReport extends ReportRow {
  /** The origin's ID string. */
  readonly key: string;
  /** The report as it came, to pass on. */
  readonly bytes: Uint8Array;
  /** Its demands, each with the key hash's number (see {@link demandIn}). */
  readonly demands: readonly { readonly id: number; readonly demand: number }[];
}

/** `report`'s demand of the key hash's number `id`, if it names the key. */
export function demandIn(report: HeardReport, id: number): number | undefined {
  for (const d of report.demands) if (d.id === id) return d.demand;
  return undefined;
}

/** Reports of others are relayed only while younger than this many protocol periods. */
export const RELAY_FRESH_PERIODS = 10;

/**
 * A report is believed for this many protocol periods from when its origin
 * made it (3 s at 200 ms): until then a report of an earlier round does not
 * replace it; after, any younger report of the origin's life does, and one
 * this old is not taken at all. Its origin refreshes it every round, so only
 * a report its origin's real ones cannot pass (a forgery at the highest
 * round) ever runs out, and then it stops counting when a real one arrives.
 */
export const REPORT_BELIEVED_PERIODS = 15;

// A report must be dead everywhere before anyone could hear it again: nobody
// relays one older than RELAY_FRESH_PERIODS, and the margin covers transit.
if (RELAY_FRESH_PERIODS + 3 > REPORT_BELIEVED_PERIODS) {
  throw new Error("REPORT_BELIEVED_PERIODS must exceed RELAY_FRESH_PERIODS by a margin");
}

/** A report as stored here: what {@link HeardReport} shows, updated in place. */
type StoredReport = { -readonly [K in Exclude<keyof HeardReport, "demands">]: HeardReport[K] } & {
  demands: Demand[];
  /** Its place in `#inTurn`. */
  turn: number;
  /** Its origin, as the members know it: a report is held only of a member known. */
  readonly peer: PeerStatus;
};

/** What {@link HeardReports.demandOf} finds of a key. */
export interface Heard {
  /** The demand summed over the counted peers' reports that name it. */
  readonly others: number;
  /** This node's own demand, averaged over the times those reports were made. */
  readonly own?: number;
  /** Counted peers of whom nothing is known of the key (see `demandOf`). */
  readonly unknown: number;
  /** Counted peers whose reports say something of it, naming it or not. */
  readonly known: number;
}

/** A key's standing here for {@link HeardReports.demandOf}, when the caller has none. */
const NOWHERE: Here = { settledMs: -Infinity, ownAt: () => 0 };

/** A key's standing here, for {@link HeardReports.demandOf}: its own demand, and since when it is settled. */
export interface Here extends OwnDemandAt {
  /**
   * When the key's news has had time to reach every peer, from when it
   * turned hot (or woke) here: a report made before then that does not
   * name the key says nothing of it.
   */
  readonly settledMs: number;
}

/** See the module doc. */
export class HeardReports {
  readonly #reports = new Map<string, StoredReport>();
  /**
   * The same reports by their origin ID's low half, one each, and what
   * tells a copy, by place in `#inTurn`: a relayed group names its origin
   * by number, and most are copies of what is held, dropped without the
   * cost of the ID's text or a look at the report. An origin that shares
   * its low half with another held is looked up by text.
   */
  readonly #rows = new HeldRows();
  /** The same reports in the order they were first taken, for the relay's round-robin. */
  readonly #inTurn: StoredReport[] = [];
  /** By place in `#inTurn`, when the report there was made (see `demandOf`). */
  #madeAtMs = new Float64Array(16);
  /** By key hash's number, the sums over all reports held. */
  readonly #totals = new DemandTotals();
  /** What is passed on of the reports in `#inTurn`. */
  readonly #relay: Relay;
  /** By origin, the life and round of the last report that ran out unrefreshed. */
  readonly #spent = new Map<string, { readonly life: number; readonly round: number }>();
  readonly #members: CountedMembers;
  readonly #believedMs: number;

  /** Reports checked against `members`, with times in periods of `periodMs`. */
  constructor(members: CountedMembers, periodMs: number) {
    this.#members = members;
    this.#believedMs = REPORT_BELIEVED_PERIODS * periodMs;
    this.#relay = new Relay(this.#rows, RELAY_FRESH_PERIODS * periodMs);
  }

  /** Every origin's report, by the origin's ID string. */
  entries(): IterableIterator<[string, HeardReport]> {
    return this.#reports.entries();
  }

  /** The report held of the origin `key`, if any. */
  get(key: string): HeardReport | undefined {
    return this.#reports.get(key);
  }

  /** Forgets what `key`'s origin said: it left, was forgotten, or started a new life. */
  forget(key: string): void {
    const known = this.#reports.get(key);
    if (known) {
      this.#totals.removeAll(known.demands);
      this.#inTurn.splice(known.turn, 1);
      this.#inTurn.forEach((o, turn) => {
        o.turn = turn;
        this.#madeAtMs[turn] = madeMsOf(o);
        this.#rows.set(turn, o);
        this.#relay.set(turn, o, o.bytes);
      });
      this.#relay.truncate(this.#inTurn.length);
      this.#rows.reindex(this.#inTurn.map((o) => o.originLo));
    }
    this.#reports.delete(key);
    this.#spent.delete(key);
  }

  /**
   * Takes the group `group` is at, if it should (see the module doc).
   *
   * @returns The report as now held, or undefined if not taken.
   */
  take(group: GroupReader, nowMs: number): HeardReport | undefined {
    const hi = group.originHi;
    const lo = group.originLo;
    const place = this.#rows.find(lo);
    if (place >= 0 && this.#rows.hiAt(place) === hi) {
      // A copy of the report held is dropped here, as `#takes` would.
      if (group.ageMs > this.#believedMs) return undefined;
      if (this.#rows.holdsNewer(place, group, nowMs, this.#believedMs)) return undefined;
    }
    const indexed = place >= 0 ? this.#inTurn[place] : undefined;
    const key = indexed !== undefined && indexed.originHi === hi
      ? indexed.key
      : memberIdText({ hi, lo });
    const known = indexed?.key === key ? indexed : this.#reports.get(key);
    const life = group.life;
    const round = group.round;
    const ageMs = group.ageMs;
    const peer = known?.peer ?? this.#members.peer(key);
    if (!this.#takes(known, key, peer, life, round, ageMs, nowMs)) return undefined;
    if (known && known.life === life && round <= known.round) {
      this.#spent.set(key, { life: known.life, round: known.round });
    }
    const report: StoredReport = known ?? {
      key,
      originHi: hi,
      originLo: lo,
      life,
      round,
      ageMs,
      receivedMs: nowMs,
      bytes: group.bytes(),
      demands: [],
      turn: this.#inTurn.length,
      peer: peer!,
    };
    if (known) {
      // The origin's next report, in the place of its last.
      known.life = life;
      known.round = round;
      known.ageMs = ageMs;
      known.receivedMs = nowMs;
      known.bytes = group.bytes(known.bytes);
    } else {
      this.#reports.set(key, report);
      this.#inTurn.push(report);
      if (indexed === undefined) this.#rows.index(lo, report.turn);
    }
    report.demands = this.#totals.replace(report.demands, group, madeMsOf(report));
    if (report.turn >= this.#madeAtMs.length) this.#madeAtMs = grown(this.#madeAtMs);
    this.#madeAtMs[report.turn] = madeMsOf(report);
    this.#rows.set(report.turn, report);
    this.#relay.set(report.turn, report, report.bytes);
    return report;
  }

  /**
   * The demand for the key hash's number `id` summed over the reports of
   * the members `view` counts; this node's own demand (`here.ownAt`) as it
   * was when each was made, averaged, to weigh against them like for like;
   * and how many counted peers say nothing of the key now. Weighed against the oldest report's time, one
   * stale report of a thousand set a node's own figure from before a jump
   * against the others' from after it, and the fleet starved; against their
   * mean time, its own figure was biased wherever demand bends (0.43 R for
   * a second after a 100× jump at 100 nodes with shared bursts).
   *
   * A counted peer whose report does not name the key, made before the
   * key's news had time to reach it (`here.settledMs`) or past belief, says
   * nothing of it (a peer that heard of the key before it had a request of
   * it has nothing to name):
   * under 30% loss at 100 nodes a node held, ten seconds after traffic
   * started, reports from before it of a third of its peers, counted them
   * as wanting nothing, took a share too large, and the fleet admitted 4 R,
   * still 1.1 R twenty seconds on. The caller counts those for the mean.
   * Costs the members not alive, a few, and a walk over the times the
   * reports held were made.
   */
  demandOf(
    id: number,
    view: Headcount,
    nowMs: number,
    here: Here = NOWHERE,
  ): Heard {
    const total = this.#totals.get(id);
    if (total === undefined) return { others: 0, unknown: 0, known: 0 };
    // Counted members whose reports say nothing of the key now: they do
    // not name it, and were made before it turned hot here or are past
    // belief. They count for the mean of the others (see the allocator).
    // A member of which no report is held counts for nothing: a stranger
    // that pinged once would otherwise hold the fleet down.
    const sinceMs = Math.max(nowMs - this.#believedMs, here.settledMs);
    // Every sum is over all reports held, less those of the members the
    // view does not count: a few of the members not alive.
    let others = total.sum;
    let reports = total.reports;
    let held = this.#inTurn.length;
    let ownSum = 0, namedBefore = 0, before = 0;
    for (const key of this.#members.notAlive()) {
      const known = this.#reports.get(key);
      if (known === undefined || view.counts(key)) continue;
      held--;
      const made = madeMsOf(known);
      if (made < sinceMs) before--;
      const d = demandIn(known, id);
      if (d === undefined) continue;
      others -= d;
      reports--;
      ownSum -= here.ownAt(made);
      if (made < sinceMs) namedBefore--;
    }
    // Rounding of the running sum must not leave a trace when nobody counts.
    if (reports === 0 || others <= 0) return { others: 0, unknown: 0, known: 0 };
    // This node's own demand as of the times the reports naming the key were made.
    ownSum = this.#totals.ownSum(total, here, sinceMs, ownSum);
    namedBefore += this.#totals.madeBefore;
    const madeAtMs = this.#madeAtMs;
    for (let turn = 0; turn < this.#inTurn.length; turn++) if (madeAtMs[turn] < sinceMs) before++;
    const unknown = before - namedBefore;
    const known = held - unknown;
    return {
      others,
      own: ownSum / reports,
      unknown: known > 0 ? unknown : 0,
      known,
    };
  }

  /**
   * Reports to pass on to the member `to`, within `budgetBytes` (see
   * `Relay.relayed`): encode them before taking more, as their bytes are
   * the ones held.
   */
  relayed(
    nowMs: number,
    to: { readonly hi: number; readonly lo: number },
    budgetBytes: number,
  ): RelayedGroup[] {
    return this.#relay.relayed(nowMs, to, budgetBytes);
  }

  #takes(
    known: HeardReport | undefined,
    key: string,
    peer: PeerStatus | undefined,
    life: number,
    round: number,
    ageMs: number,
    nowMs: number,
  ): boolean {
    if (ageMs > this.#believedMs) return false;
    // Most groups a node hears are relayed copies of what it holds: an earlier
    // or the same round of the life held, while that is believed, changes nothing.
    const sameLife = known !== undefined && known.life === life;
    if (sameLife && round <= known.round && ageOf(known, nowMs) <= this.#believedMs) {
      return false;
    }
    const live = lifeIfLive(peer);
    if (live === undefined || (live !== 0 && live !== life)) return false;
    // Mostly empty: a look-up by text only when it holds something.
    const spent = this.#spent.size === 0 ? undefined : this.#spent.get(key);
    if (spent && spent.life === life && spent.round === round) return false;
    if (!known || known.life !== life || round > known.round) return true;
    // An earlier round, relayed late or replayed, changes nothing while the
    // report held is believed.
    const knownAgeMs = ageOf(known, nowMs);
    return knownAgeMs > this.#believedMs && ageMs < knownAgeMs;
  }
}

/** When a report held was made, in this node's time: when it came, less its age then. */
export function madeMsOf(o: HeardReport): number {
  return o.receivedMs - o.ageMs;
}

/** How old a report held is now: its age when it came, and the time since. */
function ageOf(o: HeardReport, nowMs: number): number {
  return o.ageMs + (nowMs - o.receivedMs);
}
