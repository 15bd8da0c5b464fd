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
import type { CountedMembers, CountedView } from "./members.ts";
import {
  groupBytes,
  type GroupReader,
  MAX_GROUPS_PER_SECTION,
  type RelayedGroup,
} from "./report.ts";

/** What this node holds of one origin: its latest report and when it came. */
export interface HeardReport {
  /** The origin's ID string. */
  readonly key: string;
  /** The origin's ID, high half, as a report on the wire names it. */
  readonly originHi: number;
  /** The origin's ID, low half. */
  readonly originLo: number;
  /** Which life of the origin made it. */
  readonly life: number;
  /** Its round in that life. */
  readonly round: number;
  /** Its age when it came. */
  readonly ageMs: number;
  /** When it came, in this node's time. */
  readonly receivedMs: number;
  /** The report as it came, to pass on. */
  readonly bytes: Uint8Array;
  /** Its demands by the key hash's number. */
  readonly demands: Map<number, number>;
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

/** A key's demand summed over every report held, and how many reports name it. */
interface Total {
  sum: number;
  reports: number;
}

/** See the module doc. */
export class HeardReports {
  readonly #reports = new Map<string, HeardReport>();
  /**
   * The same reports by their origin ID's low half, one each: a relayed
   * group names its origin by number, and most are copies of what is held,
   * dropped without the cost of the ID's text. An origin that shares its
   * low half with another held is looked up by text.
   */
  readonly #byLo = new Map<number, HeardReport>();
  /** The origins in the order of `#reports`, for the relay's round-robin. */
  readonly #origins: string[] = [];
  /** The same reports, least recently received first. */
  readonly #byAge = new Map<string, HeardReport>();
  /**
   * By key hash's number, the sum over all reports held, kept as they come
   * and go: summing a thousand peers' reports at every tick of every node
   * was most of a large simulated fleet's time.
   */
  readonly #totals = new Map<number, Total>();
  /** By origin, the life and round of the last report that ran out unrefreshed. */
  readonly #spent = new Map<string, { readonly life: number; readonly round: number }>();
  readonly #members: CountedMembers;
  readonly #believedMs: number;
  readonly #freshMs: number;
  #relayCursor = 0;

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
      this.#add(known.demands, -1);
      this.#origins.splice(this.#origins.indexOf(key), 1);
      if (this.#byLo.get(known.originLo | 0) === known) this.#byLo.delete(known.originLo | 0);
    }
    this.#reports.delete(key);
    this.#byAge.delete(key);
    this.#spent.delete(key);
  }

  /**
   * Takes the group `group` is at, if it should (see the module doc).
   *
   * @returns Its demands by the key hash's number, or undefined if not taken.
   */
  take(group: GroupReader, nowMs: number): Map<number, number> | undefined {
    const hi = group.originHi;
    const lo = group.originLo;
    const indexed = this.#byLo.get(lo | 0);
    const key = indexed !== undefined && indexed.originHi === hi
      ? indexed.key
      : memberIdText({ hi, lo });
    const known = indexed?.key === key ? indexed : this.#reports.get(key);
    const life = group.life;
    const round = group.round;
    const ageMs = group.ageMs;
    if (!this.#takes(known, key, life, round, ageMs, nowMs)) return undefined;
    if (known && known.life === life && round <= known.round) {
      this.#spent.set(key, { life: known.life, round: known.round });
    }
    const demands = new Map<number, number>();
    for (let i = 0; i < group.records; i++) {
      demands.set(hashIdOf(group.hashHi(i), group.hashLo(i)), group.demand(i));
    }
    const report: HeardReport = {
      key,
      originHi: hi,
      originLo: lo,
      life,
      round,
      ageMs,
      receivedMs: nowMs,
      bytes: group.bytes(),
      demands,
    };
    if (known) this.#add(known.demands, -1);
    else this.#origins.push(key);
    this.#add(demands, 1);
    this.#reports.set(key, report);
    if (indexed === undefined || indexed === known) this.#byLo.set(lo | 0, report);
    this.#byAge.delete(key);
    this.#byAge.set(key, report);
    return demands;
  }

  /**
   * The demand for the key hash's number `id` summed over the reports of
   * the members `view` counts, and when the oldest of those reports came
   * (`nowMs` if none is older). Costs the members not alive, and the
   * reports older than the oldest counted one: a few, not the fleet.
   */
  demandOf(id: number, view: CountedView, nowMs: number): { others: number; oldestMs: number } {
    const total = this.#totals.get(id);
    if (total === undefined) return { others: 0, oldestMs: nowMs };
    let others = total.sum;
    let reports = total.reports;
    for (const key of this.#members.notAlive()) {
      const d = this.#reports.get(key)?.demands.get(id);
      if (d === undefined || view.counts(key)) continue;
      others -= d;
      reports--;
    }
    let oldestMs = nowMs;
    for (const [key, o] of this.#byAge) {
      if (!o.demands.has(id) || !view.counts(key)) continue;
      oldestMs = Math.min(oldestMs, o.receivedMs);
      break;
    }
    // Rounding of the running sum must not leave a trace when nobody counts.
    return { others: reports === 0 ? 0 : Math.max(0, others), oldestMs };
  }

  /**
   * Reports to pass on to the member `toKey`, within `budgetBytes`: the
   * fresh ones, round-robin from one call to the next, each as old as it is
   * now (a millisecond older at least, so that none circulates unaged).
   */
  relayed(nowMs: number, toKey: string, budgetBytes: number): RelayedGroup[] {
    const groups: RelayedGroup[] = [];
    const origins = this.#origins;
    // A section's groups, this node's own one of them; no group fits once
    // the budget is below a group's header.
    let i = 0;
    for (
      ;
      i < origins.length && groups.length < MAX_GROUPS_PER_SECTION - 1 &&
      budgetBytes >= groupBytes(0);
      i++
    ) {
      const key = origins[(this.#relayCursor + i) % origins.length];
      const o = this.#reports.get(key)!;
      const size = o.bytes.length;
      const ageMs = Math.max(ageOf(o, nowMs), o.ageMs + 1);
      if (ageMs > this.#freshMs || key === toKey || size > budgetBytes) continue;
      groups.push({ bytes: o.bytes, ageMs });
      budgetBytes -= size;
    }
    // The next call starts past what this one looked at: a fleet larger
    // than a datagram holds gets every origin passed on in turn, rather than
    // mostly the same ones again, which its receivers already hold.
    this.#relayCursor = origins.length === 0 ? 0 : (this.#relayCursor + i) % origins.length;
    return groups;
  }

  #add(demands: Map<number, number>, sign: 1 | -1): void {
    for (const [id, d] of demands) {
      let total = this.#totals.get(id);
      if (total === undefined) this.#totals.set(id, total = { sum: 0, reports: 0 });
      total.reports += sign;
      total.sum = total.reports === 0 ? 0 : total.sum + sign * d;
      if (total.reports === 0) this.#totals.delete(id);
    }
  }

  #takes(
    known: HeardReport | undefined,
    key: string,
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
    const live = this.#members.liveLife(key);
    if (live === undefined || (live !== 0 && live !== life)) return false;
    const spent = this.#spent.get(key);
    if (spent && spent.life === life && spent.round === round) return false;
    if (!known || known.life !== life || round > known.round) return true;
    // An earlier round, relayed late or replayed, changes nothing while the
    // report held is believed.
    const knownAgeMs = ageOf(known, nowMs);
    return knownAgeMs > this.#believedMs && ageMs < knownAgeMs;
  }
}

/** How old a report held is now: its age when it came, and the time since. */
function ageOf(o: HeardReport, nowMs: number): number {
  return o.ageMs + (nowMs - o.receivedMs);
}
