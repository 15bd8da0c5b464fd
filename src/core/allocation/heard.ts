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

import { hashId } from "../hash.ts";
import type { CountedMembers, CountedView } from "./members.ts";
import { type DemandGroup, groupBytes, MAX_GROUPS_PER_SECTION } from "./report.ts";

/** What this node holds of one origin: its latest report and when it came. */
export interface HeardReport {
  /** When it came, in this node's time. */
  readonly receivedMs: number;
  /** The report as it came, its age then included. */
  readonly group: DemandGroup;
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

/**
 * A key's demand summed over every report held, how many reports name it,
 * and the sum of the times they were made (for the mean time the sum is as of).
 */
interface Total {
  sum: number;
  reports: number;
  weightedMs: number;
}

/** See the module doc. */
export class HeardReports {
  readonly #reports = new Map<string, HeardReport>();
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
      this.#add(known, -1);
      this.#origins.splice(this.#origins.indexOf(key), 1);
    }
    this.#reports.delete(key);
    this.#byAge.delete(key);
    this.#spent.delete(key);
  }

  /**
   * Takes `group`, from the origin whose ID string is `key`, if it should
   * (see the module doc).
   *
   * @returns Its demands by the key hash's number, or undefined if not taken.
   */
  take(key: string, group: DemandGroup, nowMs: number): Map<number, number> | undefined {
    const known = this.#reports.get(key);
    if (!this.#takes(known, key, group, nowMs)) return undefined;
    if (known && known.group.life === group.life && group.round <= known.group.round) {
      this.#spent.set(key, { life: known.group.life, round: known.group.round });
    }
    const demands = new Map<number, number>();
    for (const r of group.records) demands.set(hashId(r.hash), r.demand);
    const report = { receivedMs: nowMs, group, demands };
    if (known) this.#add(known, -1);
    else this.#origins.push(key);
    this.#add(report, 1);
    this.#reports.set(key, report);
    this.#byAge.delete(key);
    this.#byAge.set(key, report);
    return demands;
  }

  /**
   * The demand for the key hash's number `id` summed over the reports of
   * the members `view` counts, and the time that sum is as of: the mean of
   * when the reports were made (`nowMs` if none). Against it a node weighs
   * its own demand as of then: with the oldest report's time instead, one
   * stale report of a thousand set a node's own figure from before a jump
   * against the others' from after it, and the fleet starved (weighted by
   * demand, the fresh high figures pulled the time too late, and the fleet
   * took nearly 2 R). Costs the members not alive, a few, not the fleet.
   */
  demandOf(id: number, view: CountedView, nowMs: number): { others: number; asOfMs: number } {
    const total = this.#totals.get(id);
    if (total === undefined) return { others: 0, asOfMs: nowMs };
    let others = total.sum;
    let weightedMs = total.weightedMs;
    let reports = total.reports;
    for (const key of this.#members.notAlive()) {
      const o = this.#reports.get(key);
      const d = o?.demands.get(id);
      if (d === undefined || view.counts(key)) continue;
      others -= d;
      weightedMs -= madeMs(o!);
      reports--;
    }
    // Rounding of the running sum must not leave a trace when nobody counts.
    if (reports === 0 || others <= 0) return { others: 0, asOfMs: nowMs };
    return { others, asOfMs: Math.min(nowMs, weightedMs / reports) };
  }

  /**
   * Reports to pass on to the member `toKey`, within `budgetBytes`: the
   * fresh ones, round-robin from one call to the next, each as old as it is
   * now (a millisecond older at least, so that none circulates unaged).
   */
  relayed(nowMs: number, toKey: string, budgetBytes: number): DemandGroup[] {
    const groups: DemandGroup[] = [];
    const origins = this.#origins;
    // A section's groups, this node's own one of them; no group fits once
    // the budget is below a group's header.
    for (
      let i = 0;
      i < origins.length && groups.length < MAX_GROUPS_PER_SECTION - 1 &&
      budgetBytes >= groupBytes(0);
      i++
    ) {
      const key = origins[(this.#relayCursor + i) % origins.length];
      const o = this.#reports.get(key)!;
      const size = groupBytes(o.group.records.length);
      const ageMs = Math.max(ageOf(o, nowMs), o.group.ageMs + 1);
      if (ageMs > this.#freshMs || key === toKey || size > budgetBytes) continue;
      groups.push({ ...o.group, ageMs });
      budgetBytes -= size;
    }
    this.#relayCursor = origins.length === 0 ? 0 : (this.#relayCursor + 1) % origins.length;
    return groups;
  }

  #add(report: HeardReport, sign: 1 | -1): void {
    const atMs = madeMs(report);
    for (const [id, d] of report.demands) {
      let total = this.#totals.get(id);
      if (total === undefined) this.#totals.set(id, total = { sum: 0, reports: 0, weightedMs: 0 });
      total.reports += sign;
      total.sum = total.reports === 0 ? 0 : total.sum + sign * d;
      total.weightedMs = total.reports === 0 ? 0 : total.weightedMs + sign * atMs;
      if (total.reports === 0) this.#totals.delete(id);
    }
  }

  #takes(known: HeardReport | undefined, key: string, group: DemandGroup, nowMs: number): boolean {
    if (group.ageMs > this.#believedMs) return false;
    // Most groups a node hears are relayed copies of what it holds: an earlier
    // or the same round of the life held, while that is believed, changes nothing.
    const sameLife = known !== undefined && known.group.life === group.life;
    if (sameLife && group.round <= known.group.round && ageOf(known, nowMs) <= this.#believedMs) {
      return false;
    }
    const life = this.#members.liveLife(key);
    if (life === undefined || (life !== 0 && life !== group.life)) return false;
    const spent = this.#spent.get(key);
    if (spent && spent.life === group.life && spent.round === group.round) return false;
    if (!known || known.group.life !== group.life || group.round > known.group.round) return true;
    // An earlier round, relayed late or replayed, changes nothing while the
    // report held is believed.
    const knownAgeMs = ageOf(known, nowMs);
    return knownAgeMs > this.#believedMs && group.ageMs < knownAgeMs;
  }
}

/** When a report held was made, in this node's time: when it came, less its age then. */
function madeMs(o: HeardReport): number {
  return o.receivedMs - o.group.ageMs;
}

/** How old a report held is now: its age when it came, and the time since. */
function ageOf(o: HeardReport, nowMs: number): number {
  return o.group.ageMs + (nowMs - o.receivedMs);
}
