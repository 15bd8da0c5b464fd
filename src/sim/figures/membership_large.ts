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
 * from `previous` (the block as written), so that `--sizes 200` rewrites
 * one row and leaves the thousand's, which takes most of an hour on a
 * busy machine, as it was measured.
 */
export function largeFiguresMarkdown(
  sizes: readonly number[] = LARGE_SIZES,
  previous = "",
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
  for (const line of previous.split("\n")) {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    const n = Number(/^(\d+) nodes$/.exec(cells[0] ?? "")?.[1]);
    if (n && !measured.has(n) && cells.length === HEADER.length) measured.set(n, cells);
  }
  const rows = [...measured.keys()].sort((a, b) => a - b).map((n) => measured.get(n)!);
  return table([HEADER, ...rows]);
}
