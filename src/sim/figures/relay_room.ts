/**
 * How fresh the relay keeps every member's demand report at every other
 * member, for docs/accuracy.md ("Room in the relay"): a fleet of N with
 * demand on every instance (skewed, as the large accuracy rows have it),
 * settled, then watched every protocol period over a window. For each
 * (holder, origin) pair it reads the report the holder holds of the origin
 * and counts its age (now less when the origin made it), the interval
 * between successive refreshes (a newer round of the origin taken), and
 * whether any report is believed (held, and younger than
 * `REPORT_BELIEVED_PERIODS`).
 *
 * A datagram relays about 40 groups at any size, so the larger the fleet,
 * the longer each origin waits for its turn at each holder; the figure says
 * how close that comes to the 15 periods a report is believed. Too slow for
 * the test suite at its sizes (a 2000-member row is most of an hour of CPU):
 * `deno task relay:room` writes the table.
 *
 * The watch is every period, not every second: a pair refreshed twice
 * between two looks counts one interval of the two, and at a second apart
 * that would be most pairs' lot at these sizes. Two refreshes within one
 * period still count as one. The fleet runs with no clock drift, so every
 * node's time is the simulator's.
 *
 * @module
 */

import { REPORT_BELIEVED_PERIODS } from "../../core/allocation/heard.ts";
import { GUARD_BOUNDS } from "../../core/options.ts";
import { Fleet } from "../faces/fleet.ts";
import { LIMIT, skewed, TRAFFIC_AT_MS } from "../accuracy/run.ts";
import { table } from "./membership.ts";

/** The sizes of the table: 2000 is the one issue 35 asks about; 200 and 1000 to compare. */
export const RELAY_ROOM_SIZES: readonly number[] = [200, 1_000, 2_000];

/** The markers of the table in docs/accuracy.md. */
export const RELAY_ROOM_MARKERS = {
  begin: "<!-- relay-room:begin",
  end: "<!-- relay-room:end -->",
} as const;

/** How a run is set up. */
export interface RelayRoomOptions {
  /** The simulator's seed (default 1). */
  readonly seed?: number;
  /** When the watch starts, ms from the start (default 20 s). */
  readonly settleMs?: number;
  /** How long it lasts, ms (default 20 s). */
  readonly windowMs?: number;
  /** Told, every second of the watch, the share of that second's looks with no report believed. */
  readonly trace?: (nowMs: number, unbelieved: number) => void;
}

/** What one run measured: intervals and ages in protocol periods. */
export interface RelayRoom {
  /** Members in the fleet. */
  readonly members: number;
  /** The watch, [from, to] ms from the start. */
  readonly watchedMs: readonly [number, number];
  /** Refresh intervals seen whole within the window. */
  readonly refreshes: number;
  /** Their median and 90th percentile, periods. */
  readonly intervalMedian: number;
  readonly intervalP90: number;
  /** The longest, periods. */
  readonly intervalMax: number;
  /** Age of the reports held, over every look at every pair: median, 90th percentile, periods. */
  readonly ageMedian: number;
  readonly ageP90: number;
  /** Looks at a pair that found no report believed (none held, or past belief), of all looks. */
  readonly unbelieved: number;
  /** Looks at a pair that found no report held at all, of all looks. */
  readonly unheld: number;
}

/** Histograms count to a millisecond up to this; anything longer counts here. */
const HISTOGRAM_MS = 60_000;

/**
 * Runs a fleet of `members` and watches every pair's report (see the
 * module doc).
 *
 * @throws {RangeError} if `members` is under 2.
 */
export function relayRoom(members: number, options: RelayRoomOptions = {}): RelayRoom {
  if (!Number.isInteger(members) || members < 2) {
    throw new RangeError(`a fleet of at least 2 members, not ${members}`);
  }
  const periodMs = GUARD_BOUNDS.protocolPeriodMs.default;
  const believedMs = REPORT_BELIEVED_PERIODS * periodMs;
  const settleMs = options.settleMs ?? 20_000;
  const endMs = settleMs + (options.windowMs ?? 20_000);
  const fleet = new Fleet({ seed: options.seed ?? 1, size: members, limit: LIMIT });
  fleet.runUntil(TRAFFIC_AT_MS);
  for (let i = 0; i < members; i++) fleet.setDemand(i, skewed(i));
  fleet.runUntil(settleMs);
  // Origins by ID as they are first seen; per pair (holder × members +
  // origin), the life, round and arrival of the report last looked at, NaN
  // before the first look that found one.
  const originOf = new Map<string, number>();
  const pairs = members * members;
  const life = new Float64Array(pairs).fill(NaN);
  const round = new Float64Array(pairs);
  const received = new Float64Array(pairs);
  const intervals = new Uint32Array(HISTOGRAM_MS + 1);
  const ages = new Uint32Array(HISTOGRAM_MS + 1);
  let looks = 0, held = 0, believed = 0;
  let secondLooks = 0, secondBelieved = 0;
  for (let nowMs = settleMs; nowMs <= endMs; nowMs += periodMs) {
    fleet.runUntil(nowMs);
    for (let holder = 0; holder < members; holder++) {
      const node = fleet.node(holder);
      if (!node) continue;
      looks += members - 1;
      for (const [id, report] of node.heardReports()) {
        let origin = originOf.get(id);
        if (origin === undefined) originOf.set(id, origin = originOf.size);
        const pair = holder * members + origin;
        held++;
        const ageMs = report.ageMs + nowMs - report.receivedMs;
        ages[Math.min(HISTOGRAM_MS, Math.round(ageMs))]++;
        if (ageMs <= believedMs) believed++;
        // A newer round of the life last looked at is a refresh.
        if (report.life === life[pair] && report.round > round[pair]) {
          intervals[Math.min(HISTOGRAM_MS, Math.round(report.receivedMs - received[pair]))]++;
        }
        life[pair] = report.life;
        round[pair] = report.round;
        received[pair] = report.receivedMs;
      }
    }
    if (options.trace && nowMs % 1_000 === 0 && nowMs > settleMs) {
      options.trace(nowMs, 1 - (believed - secondBelieved) / (looks - secondLooks));
      secondLooks = looks;
      secondBelieved = believed;
    }
  }
  const periods = (ms: number) => ms / periodMs;
  return {
    members,
    watchedMs: [settleMs, endMs],
    refreshes: intervals.reduce((sum, n) => sum + n, 0),
    intervalMedian: periods(quantile(intervals, 0.5)),
    intervalP90: periods(quantile(intervals, 0.9)),
    intervalMax: periods(quantile(intervals, 1)),
    ageMedian: periods(quantile(ages, 0.5)),
    ageP90: periods(quantile(ages, 0.9)),
    unbelieved: 1 - believed / looks,
    unheld: 1 - held / looks,
  };
}

/** The least value (its bin, ms) that a share `q` of the histogram's counts is at or below. */
function quantile(histogram: Uint32Array, q: number): number {
  let total = 0;
  for (const n of histogram) total += n;
  const wanted = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let ms = 0; ms < histogram.length; ms++) {
    seen += histogram[ms];
    if (seen >= wanted) return ms;
  }
  return NaN;
}

/** The table's header. */
const HEADER = [
  "Members",
  "Refresh interval, median / p90 / longest",
  "Report age, median / p90",
  "Looks with no report believed (none held)",
  "Measured at, watched",
];

/**
 * The table of `runs`, measured at `commit`, as Markdown, with the rows of
 * other sizes kept from `previous` (the document, or its block) as they
 * were written: a 2000-member row costs most of an hour.
 */
export function relayRoomTable(
  runs: readonly RelayRoom[],
  commit: string,
  previous = "",
): string {
  const p = (x: number) => `${x.toFixed(1)}`;
  const percent = (x: number) => `${(100 * x).toFixed(2)}%`;
  const rows = new Map<number, string[]>(keptRows(previous));
  for (const r of runs) {
    rows.set(r.members, [
      `${r.members}`,
      `${p(r.intervalMedian)} / ${p(r.intervalP90)} / ${p(r.intervalMax)} periods`,
      `${p(r.ageMedian)} / ${p(r.ageP90)} periods`,
      `${percent(r.unbelieved)} (${percent(r.unheld)})`,
      `${commit}, ${r.watchedMs.map((ms) => ms / 1_000).join("–")} s`,
    ]);
  }
  const sorted = [...rows.keys()].sort((a, b) => a - b).map((n) => rows.get(n)!);
  return table([HEADER, ...sorted]);
}

/** The rows of the table in `previous` (between its markers, if it has them), by size. */
function keptRows(previous: string): Map<number, string[]> {
  const begin = previous.indexOf(RELAY_ROOM_MARKERS.begin);
  const end = previous.indexOf(RELAY_ROOM_MARKERS.end);
  const block = begin >= 0 && end > begin ? previous.slice(begin, end) : previous;
  const kept = new Map<number, string[]>();
  for (const line of block.split("\n")) {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    const n = Number(cells[0]);
    if (cells.length === HEADER.length && Number.isInteger(n) && n > 0) kept.set(n, cells);
  }
  return kept;
}
