/**
 * Membership's figures at 200 and 1000 nodes, for docs/membership.md:
 * traffic of a healthy cluster, time for a crash to be known by all, and
 * false deaths under loss. Too slow for the test suite; `deno task sim
 * figures --large --write docs/membership.md` regenerates them.
 *
 * @module
 */

import { Cluster } from "../faces/cluster.ts";
import { FalseDeaths } from "../faces/deaths.ts";
import { crashDetection, healthyTraffic, table } from "./membership.ts";
import { Report, waitFor } from "../scenarios/report.ts";
import { settled } from "../scenarios/named.ts";

/** The sizes measured. */
export const LARGE_SIZES: readonly number[] = [200, 1_000];
/** Seeds of the crash runs at each size. */
const CRASH_RUNS = 3;
/** How long a lossy cluster is watched for false deaths. */
const LOSSY_MS = 60_000;

/** The markers of the large figures in docs/membership.md. */
export const LARGE_MARKERS = {
  begin: "<!-- figures-large:begin",
  end: "<!-- figures-large:end -->",
} as const;

/**
 * Live members declared dead by some node over a minute (or `durationMs`)
 * under `lossRate`, once the cluster has formed: each (observer, member)
 * pair counted once.
 */
export function falseDeaths(
  size: number,
  lossRate: number,
  options: { seed?: number; durationMs?: number } = {},
): number {
  const cluster = new Cluster({ seed: options.seed ?? 1, size });
  waitFor(cluster, () => cluster.converged(), 20_000);
  cluster.faults = { lossRate };
  const dead = new FalseDeaths();
  // Nobody crashes here: every death is a false one.
  cluster.onChange(({ observer, change }) => dead.record(observer, change, () => true));
  cluster.runFor(options.durationMs ?? LOSSY_MS);
  return dead.count;
}

/**
 * How long a node joining a settled cluster of `size` takes to know every
 * member, ms (Infinity if not within 10 s).
 */
export function newcomerLearns(size: number, seed = 1): number {
  const cluster = settled(seed, size, new Report("figures", seed));
  const startMs = cluster.nowMs;
  const newcomer = cluster.add({ seeds: [0] });
  const learned = waitFor(cluster, () => cluster.view(newcomer).size === size + 1, 10_000, 10);
  return (learned ?? Infinity) - startMs;
}

const HEADER = [
  "Healthy cluster",
  "Datagrams per node per period",
  "Bytes per node per period",
  "Crash known by all: mean, slowest",
  "Newcomer knows all",
  "False deaths in a minute, 10% loss",
  "30% loss",
];

/**
 * The large figures, as Markdown. Rows of sizes not in `sizes` are kept
 * from `previous` (the document, or the block as written), so that
 * `--sizes 200` rewrites one row and leaves the thousand's, which takes
 * most of an hour on a busy machine, as it was measured ({@link keptRows}
 * says how, and which kept row is stale).
 *
 * @param sizes The sizes to measure.
 * @param previous The document the figures go into, or its block.
 * @param warn Told of every kept row that is stale, naming it.
 */
export function largeFiguresMarkdown(
  sizes: readonly number[] = LARGE_SIZES,
  previous = "",
  warn: (line: string) => void = console.error,
): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const measured = new Map(sizes.map((n) => {
    const t = healthyTraffic(n);
    const d = crashDetection(n, CRASH_RUNS);
    return [n, [
      `${n} nodes`,
      t.datagramsPerPeriod.toFixed(2),
      t.bytesPerPeriod.toFixed(0),
      `${s(d.allMeanMs)}, ${s(d.allMaxMs)} (${d.runs} seeds)`,
      s(newcomerLearns(n)),
      String(falseDeaths(n, 0.1)),
      String(falseDeaths(n, 0.3)),
    ]];
  }));
  return largeTable(measured, previous, warn);
}

/**
 * The large figures' table: the rows `measured` (size to cells, in
 * {@link HEADER}'s order), and the rows of other sizes kept from
 * `previous` ({@link keptRows}), by size.
 */
export function largeTable(
  measured: ReadonlyMap<number, readonly string[]>,
  previous: string,
  warn: (line: string) => void = console.error,
): string {
  const rows = keptRows(previous, new Set(measured.keys()), warn);
  for (const [n, cells] of measured) rows.set(n, [...cells]);
  const sorted = [...rows.keys()].sort((a, b) => a - b).map((n) => rows.get(n)!);
  return table([HEADER, ...sorted]);
}

/** What a kept row shows in a column its block did not have. */
export const NOT_MEASURED = "not measured (rerun this size)";

/**
 * The rows of the large figures' block in `previous` (between
 * {@link LARGE_MARKERS}; all of `previous` if it has none) of sizes not
 * `remeasured`, by size, each
 * cell under the column of {@link HEADER} its block's header names: a row
 * written before a column was added keeps what it measured and shows
 * {@link NOT_MEASURED} in the new column, and `warn` names it, as it does
 * a row whose cells do not match its header (kept, marked, never silently
 * dropped) and a column the table no longer has (its cells left out).
 */
export function keptRows(
  previous: string,
  remeasured: ReadonlySet<number> = new Set(),
  warn: (line: string) => void = console.error,
): Map<number, string[]> {
  const begin = previous.indexOf(LARGE_MARKERS.begin);
  const end = previous.indexOf(LARGE_MARKERS.end);
  const block = begin >= 0 && end > begin ? previous.slice(begin, end) : previous;
  const kept = new Map<number, string[]>();
  let columns: string[] | undefined;
  for (const line of block.split("\n")) {
    if (!line.startsWith("|")) continue;
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    if (cells[0] === HEADER[0]) {
      columns = cells;
      const gone = cells.filter((name) => !HEADER.includes(name));
      if (gone.length > 0) warn(`figures-large: the table no longer has ${gone.join(", ")}`);
      continue;
    }
    const n = Number(/^(\d+) nodes$/.exec(cells[0] ?? "")?.[1]);
    if (!n || columns === undefined || remeasured.has(n)) continue;
    const row = HEADER.map((name) => {
      const at = columns!.indexOf(name);
      return at >= 0 && at < cells.length ? cells[at] : NOT_MEASURED;
    });
    if (cells.length !== columns.length) {
      warn(
        `figures-large: the ${n} nodes row has ${cells.length} cells under ${columns.length} ` +
          `columns: kept as it reads, marked "${NOT_MEASURED}" where it has none; rerun --sizes ${n}`,
      );
    } else if (row.includes(NOT_MEASURED)) {
      const missing = HEADER.filter((_, c) => row[c] === NOT_MEASURED);
      warn(
        `figures-large: the ${n} nodes row is stale, measured before ${missing.join(", ")}: ` +
          `kept, marked "${NOT_MEASURED}"; rerun --sizes ${n}`,
      );
    }
    kept.set(n, row);
  }
  return kept;
}
