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
 * @module
 */

import { hashIdOf } from "../hash.ts";
import { memberIdText } from "../../proto/member_id.ts";
import { HeldRows, type ReportRow } from "./held_rows.ts";
import { type CountedMembers, type Headcount, lifeIfLive, type PeerStatus } from "./members.ts";
import {
  groupBytes,
  type GroupReader,
  MAX_GROUPS_PER_SECTION,
  type RelayedGroup,
} from "./report.ts";

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

/**
 * A key's demand summed over every report held that names it, how many
 * reports name it, and the demands themselves with the times their
 * reports were made, for the walk that weighs this node's own demand
 * against theirs.
 */
interface Total {
  readonly id: number;
  sum: number;
  reports: number;
  readonly named: Demand[];
  /**
   * By place in `named`, when the report was made: the walk reads these
   * numbers, side by side in memory, not the demands and reports, which a
   * large fleet scatters over its heap.
   */
  madeAtMs: Float64Array<ArrayBuffer>;
}

/** One report's demand of one key, as counted in the key's total. */
interface Demand {
  readonly id: number;
  demand: number;
  /** When the report that named it was made, as counted in the total. */
  madeMs: number;
  /** The count of the report that last named it, to tell what a new one left out. */
  stamp: number;
  readonly total: Total;
  /** Its place in its total's `named`. */
  at: number;
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

const NO_BREAKS: ArrayLike<number> = [];

/** A key's standing here for {@link HeardReports.demandOf}, when the caller has none. */
const NOWHERE: Here = { settledMs: -Infinity, ownAt: () => 0 };

/** A key's standing here, for {@link HeardReports.demandOf}. */
export interface Here {
  /**
   * When the key's news has had time to reach every peer, from when it
   * turned hot (or woke) here: a report made before then that does not
   * name the key says nothing of it.
   */
  readonly settledMs: number;
  /** This node's own demand of the key as of a time. */
  readonly ownAt: (ms: number) => number;
  /**
   * Times, newest first, between which `ownAt` is linear (and from the
   * first on, and before the last): none if it is linear throughout.
   */
  readonly breaksMs?: ArrayLike<number>;
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
  /** By place in `#inTurn`, the bytes of the report there, for the relay. */
  readonly #bytesAt: Uint8Array[] = [];
  /** The same reports in the order they were first taken, for the relay's round-robin. */
  readonly #inTurn: StoredReport[] = [];
  /**
   * By place in `#inTurn`, from when the report there is too old to pass
   * on, to within a millisecond: the relay's walk past stale reports reads
   * these numbers, not the reports.
   */
  #staleAtMs = new Float64Array(16);
  /** By place in `#inTurn`, when the report there was made (see `demandOf`). */
  #madeAtMs = new Float64Array(16);
  /**
   * By key hash's number, the sum over all reports held, kept as they come
   * and go: summing a thousand peers' reports at every tick of every node
   * was most of a large simulated fleet's time.
   */
  readonly #totals = new Map<number, Total>();
  /** A report's demands while the next one of its origin is read: the two swap. */
  #spare: Demand[] = [];
  /** Counts reports taken, to stamp the demands each names. */
  #stamp = 0;
  /** By origin, the life and round of the last report that ran out unrefreshed. */
  readonly #spent = new Map<string, { readonly life: number; readonly round: number }>();
  readonly #members: CountedMembers;
  readonly #believedMs: number;
  readonly #freshMs: number;
  #relayCursor = 0;
  /** Scratch for `demandOf`: reports, and the sum of their times, by own demand's segment. */
  #segmentN = new Float64Array(17);
  #segmentSum = new Float64Array(17);

  /** Reports checked against `members`, with times in periods of `periodMs`. */
  constructor(members: CountedMembers, periodMs: number) {
    this.#members = members;
    this.#believedMs = REPORT_BELIEVED_PERIODS * periodMs;
    this.#freshMs = RELAY_FRESH_PERIODS * periodMs;
  }

  /** Every origin's report, by the origin's ID string. */
  entries(): IterableIterator<[string, HeardReport]> {
    return this.#reports.entries();
  }

  /** Forgets what `key`'s origin said: it left, was forgotten, or started a new life. */
  forget(key: string): void {
    const known = this.#reports.get(key);
    if (known) {
      for (const d of known.demands) this.#remove(d);
      this.#inTurn.splice(known.turn, 1);
      this.#inTurn.forEach((o, turn) => {
        o.turn = turn;
        this.#staleAtMs[turn] = this.#staleAt(o);
        this.#madeAtMs[turn] = madeMsOf(o);
        this.#rows.set(turn, o);
        this.#bytesAt[turn] = o.bytes;
      });
      this.#bytesAt.length = this.#inTurn.length;
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
    this.#replaceDemands(report, group);
    if (report.turn >= this.#staleAtMs.length) {
      this.#staleAtMs = grown(this.#staleAtMs);
      this.#madeAtMs = grown(this.#madeAtMs);
    }
    this.#staleAtMs[report.turn] = this.#staleAt(report);
    this.#madeAtMs[report.turn] = madeMsOf(report);
    this.#rows.set(report.turn, report);
    this.#bytesAt[report.turn] = report.bytes;
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
    // Walked by the times alone: the reports themselves, walked for each
    // key at every tick, were most of a 200-node fleet's time. Own demand
    // is linear between breaks, so its sum over the times between two is
    // their count times its value at their mean: asked for each report,
    // it was a tenth of a 1000-node fleet's time.
    const breaks = here.breaksMs ?? NO_BREAKS;
    const segments = breaks.length + 1;
    if (this.#segmentN.length < segments) {
      this.#segmentN = new Float64Array(segments);
      this.#segmentSum = new Float64Array(segments);
    }
    const segN = this.#segmentN.fill(0, 0, segments);
    const segSum = this.#segmentSum.fill(0, 0, segments);
    const namedAtMs = total.madeAtMs;
    // A report's stretch is the first break at or before its time. Walked
    // from the first break, that took several steps a report (the breaks
    // are a round apart, and reports are relayed for rounds); the walk
    // starts instead below the stretch: never past it, as no two breaks
    // are further apart than `widest`, so the same stretch.
    const skip = skipRate(breaks);
    const first = breaks[0];
    for (let i = 0; i < total.reports; i++) {
      const made = namedAtMs[i];
      let k = 0;
      const behind = (first - made) * skip.perMs;
      if (behind >= 2) k = Math.min(Math.floor(behind) - 1, skip.finite);
      while (k < breaks.length && !(breaks[k] <= made)) k++;
      segN[k]++;
      segSum[k] += made;
      if (made < sinceMs) namedBefore++;
    }
    for (let k = 0; k < segments; k++) {
      if (segN[k] > 0) ownSum += segN[k] * here.ownAt(segSum[k] / segN[k]);
    }
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
   * Reports to pass on to the member `to`, within `budgetBytes`: the fresh
   * ones, round-robin from one call to the next, each as old as it is now
   * (a millisecond older at least, so that none circulates unaged), none of
   * them `to`'s own. Their bytes are the ones held, which the origin's next
   * report overwrites: encode them before taking more.
   */
  relayed(
    nowMs: number,
    to: { readonly hi: number; readonly lo: number },
    budgetBytes: number,
  ): RelayedGroup[] {
    const groups: RelayedGroup[] = [];
    const n = this.#inTurn.length;
    // A section's groups, this node's own one of them; no group fits once
    // the budget is below a group's header.
    let i = 0;
    for (
      ;
      i < n && groups.length < MAX_GROUPS_PER_SECTION - 1 && budgetBytes >= groupBytes(0);
      i++
    ) {
      const turn = (this.#relayCursor + i) % n;
      if (nowMs > this.#staleAtMs[turn] + 1) continue;
      // Read from the rows and the bytes alone, not the reports (see `held_rows.ts`).
      const bytes = this.#bytesAt[turn];
      const ageMs = this.#rows.relayAgeMs(turn, nowMs);
      if (ageMs > this.#freshMs || this.#rows.isOrigin(turn, to)) continue;
      // The first that does not fit is the first of the next call.
      if (bytes.length > budgetBytes) break;
      groups.push({ bytes, ageMs });
      budgetBytes -= bytes.length;
    }
    // The next call starts past what this one looked at: a fleet larger
    // than a datagram holds gets every origin passed on in turn, rather than
    // mostly the same ones again, which its receivers already hold.
    this.#relayCursor = n === 0 ? 0 : (this.#relayCursor + i) % n;
    return groups;
  }

  /** When `o` becomes too old to pass on (see `relayed`), to within rounding. */
  #staleAt(o: StoredReport): number {
    return o.ageMs + 1 > this.#freshMs ? -Infinity : o.receivedMs - o.ageMs + this.#freshMs;
  }

  /**
   * The demands of `group` in the place of `report`'s (already updated to
   * the group's time): each key's figure and time updated in its total,
   * keys no longer named taken out.
   */
  #replaceDemands(report: StoredReport, group: GroupReader): void {
    const madeMs = madeMsOf(report);
    if (this.#sameKeys(report, group)) {
      // The same keys in the same order, as an origin's rounds mostly are: in place.
      for (let i = 0; i < group.records; i++) recount(report.demands[i], group.demand(i), madeMs);
      return;
    }
    const old = report.demands;
    const fresh = this.#spare;
    const stamp = ++this.#stamp;
    for (let i = 0; i < group.records; i++) {
      const id = hashIdOf(group.hashHi(i), group.hashLo(i));
      const value = group.demand(i);
      // An origin lists its hot keys in the same order round after round:
      // the key at the same place is the one to look at first.
      let d: Demand | undefined = old[i]?.id === id ? old[i] : undefined;
      d ??= old.find((x) => x.id === id) ?? fresh.find((x) => x.id === id);
      if (d?.stamp === stamp) {
        // Named twice in a group (or two keys sharing a number): the last figure counts.
        recount(d, value, madeMs);
        continue;
      }
      if (d !== undefined) {
        recount(d, value, madeMs);
        d.stamp = stamp;
      } else {
        let total = this.#totals.get(id);
        if (total === undefined) {
          total = { id, sum: 0, reports: 0, named: [], madeAtMs: new Float64Array(8) };
          this.#totals.set(id, total);
        }
        d = { id, demand: value, madeMs, stamp, total, at: total.named.length };
        total.named.push(d);
        if (d.at >= total.madeAtMs.length) total.madeAtMs = grown(total.madeAtMs);
        total.madeAtMs[d.at] = madeMs;
        total.reports++;
        total.sum += value;
      }
      fresh.push(d);
    }
    for (const d of old) if (d.stamp !== stamp) this.#remove(d);
    old.length = 0;
    report.demands = fresh;
    this.#spare = old;
  }

  /** Whether `group` names the keys `report` does, in its order. */
  #sameKeys(report: StoredReport, group: GroupReader): boolean {
    const held = report.demands;
    if (held.length !== group.records) return false;
    for (let i = 0; i < held.length; i++) {
      if (held[i].id !== hashIdOf(group.hashHi(i), group.hashLo(i))) return false;
    }
    return true;
  }

  /** Takes one report's demand of a key out of the key's total. */
  #remove(d: Demand): void {
    const total = d.total;
    const last = total.named.pop()!;
    if (last !== d) {
      total.named[d.at] = last;
      total.madeAtMs[d.at] = last.madeMs;
      last.at = d.at;
    }
    total.reports--;
    total.sum = total.reports === 0 ? 0 : total.sum - d.demand;
    if (total.reports === 0) this.#totals.delete(total.id);
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

/**
 * How far to start the walk for a report's stretch in `breaks`: `perMs`, the
 * breaks a millisecond before the first that may be passed over, and
 * `finite`, how many breaks are times (the rest are -Infinity). `perMs` is
 * 0, so that every walk starts at the first break, unless the breaks are
 * times, latest first, then -Infinity, and some two of them differ: then
 * no stretch between two breaks is wider than `1 / perMs`, and a report
 * `m` ms before the first break is past at least `m × perMs - 1` of them
 * (one less for the rounding of the product).
 */
function skipRate(breaks: ArrayLike<number>): { perMs: number; finite: number } {
  let finite = 0;
  let widest = 0;
  while (finite < breaks.length && breaks[finite] > -Infinity) {
    if (finite > 0) {
      const gap = breaks[finite - 1] - breaks[finite];
      if (!(gap >= 0 && gap < Infinity)) return { perMs: 0, finite };
      if (gap > widest) widest = gap;
    }
    finite++;
  }
  for (let j = finite; j < breaks.length; j++) {
    if (breaks[j] !== -Infinity) return { perMs: 0, finite };
  }
  return { perMs: widest > 0 && breaks[0] < Infinity ? 1 / widest : 0, finite };
}

/** A demand's new figure, of a report made at `madeMs`, in its key's total. */
function recount(d: Demand, demand: number, madeMs: number): void {
  d.total.sum += demand - d.demand;
  d.demand = demand;
  d.madeMs = madeMs;
  d.total.madeAtMs[d.at] = madeMs;
}

/** `a` in an array twice its length. */
function grown(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const b = new Float64Array(2 * a.length);
  b.set(a);
  return b;
}

/** When a report held was made, in this node's time: when it came, less its age then. */
function madeMsOf(o: HeardReport): number {
  return o.receivedMs - o.ageMs;
}

/** How old a report held is now: its age when it came, and the time since. */
function ageOf(o: HeardReport, nowMs: number): number {
  return o.ageMs + (nowMs - o.receivedMs);
}
