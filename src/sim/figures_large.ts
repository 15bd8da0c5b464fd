/**
 * Membership's figures at 200 and 1000 nodes, for docs/membership.md:
 * traffic of a healthy cluster, time for a crash to be known by all, and
 * false deaths under loss. Too slow for the test suite; `deno task sim
 * figures --large --write docs/membership.md` regenerates them.
 *
 * @module
 */

import { Cluster } from "./cluster.ts";
import { FalseDeaths } from "./deaths.ts";
import { crashDetection, healthyTraffic, table } from "./figures.ts";
import { waitFor } from "./report.ts";

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
  cluster.setFaults({ lossRate });
  const dead = new FalseDeaths();
  // Nobody crashes here: every death is a false one.
  cluster.onChange(({ observer, change }) => dead.record(observer, change, () => true));
  cluster.runFor(options.durationMs ?? LOSSY_MS);
  return dead.count;
}

/** The large figures, as Markdown. */
export function largeFiguresMarkdown(sizes: readonly number[] = LARGE_SIZES): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const rows = sizes.map((n) => {
    const t = healthyTraffic(n);
    const d = crashDetection(n, CRASH_RUNS);
    return [
      `${n} nodes`,
      t.datagramsPerPeriod.toFixed(2),
      t.bytesPerPeriod.toFixed(0),
      `${s(d.allMeanMs)}, ${s(d.allMaxMs)} (${d.runs} seeds)`,
      String(falseDeaths(n, 0.1)),
      String(falseDeaths(n, 0.3)),
    ];
  });
  return table([
    [
      "Healthy cluster",
      "Datagrams per node per period",
      "Bytes per node per period",
      "Crash known by all: mean, slowest",
      "False deaths in a minute, 10% loss",
      "30% loss",
    ],
    ...rows,
  ]);
}
