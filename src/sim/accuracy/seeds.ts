/**
 * The rows of one size on several seeds, the worst of each row over them:
 * `deno task accuracy:seeds` (the 1000-node rows on seeds 1 to 3, on Bun;
 * hours of CPU, so not in CI). Each column takes its worst seed on its
 * own: the steady rate farthest from R, the highest peak, the most seconds
 * over 1.01 R, the longest settling; a row holds only if it holds on every
 * seed. With `--write` the table goes into docs/accuracy.md between
 * `<!-- accuracy-1000-seeds:start -->` and its end marker.
 *
 * @module
 */

import type { Outcome, Scenario } from "./run.ts";

/** A row's outcomes, one a seed. */
export interface SeededRow {
  /** The scenario. */
  readonly scenario: Scenario;
  /** Its outcome on each seed, in the order of the seeds. */
  readonly outcomes: readonly Outcome[];
}

/** Runs each of `scenarios` on each of `seeds`; `onRun` hears of each run as it ends. */
export function runSeeds(
  scenarios: readonly Scenario[],
  seeds: readonly number[],
  runRow: (s: Scenario, seed: number) => Outcome,
): SeededRow[] {
  return scenarios.map((scenario) => ({
    scenario,
    outcomes: seeds.map((seed) => runRow(scenario, seed)),
  }));
}

/** Whether the row holds on every seed. */
export function holdsOnEvery(row: SeededRow): boolean {
  return row.outcomes.every((o) => row.scenario.holds(o));
}

/** The rows as a Markdown table of the worst of each column over the seeds. */
export function renderWorst(rows: readonly SeededRow[], seeds: readonly number[]): string {
  const r3 = (x: number) => `${x.toFixed(3)} R`;
  const worst = <T>(xs: readonly T[], by: (x: T) => number) =>
    xs.reduce((a, b) => (by(b) > by(a) ? b : a));
  const seedOf = (row: SeededRow, o: Outcome) => seeds[row.outcomes.indexOf(o)];
  return [
    `| Scenario | Design bound | Steady, farthest from R | Peak second | Seconds over 1.01 R | Settles in | Holds on seeds ${
      seeds.join(", ")
    } |`,
    "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ...rows.map((row) => {
      const os = row.outcomes;
      const steady = worst(os, (o) => Math.abs(o.steady - 1));
      const peak = worst(os, (o) => o.peak);
      const over = worst(os, (o) => o.secondsOver);
      const settles = worst(os, (o) => o.settlesInS);
      const broken = os.filter((o) => !row.scenario.holds(o)).map((o) => seedOf(row, o));
      return `| ${row.scenario.label} | ${row.scenario.bound} | ${r3(steady.steady)} (seed ${
        seedOf(row, steady)
      }) | ${peak.peak.toFixed(2)} R (seed ${seedOf(row, peak)}) | ${over.secondsOver} (seed ${
        seedOf(row, over)
      }) | ${settles.settlesInS} s (seed ${seedOf(row, settles)}) | ${
        broken.length === 0 ? "yes" : `breaks on ${broken.join(", ")}`
      } |`;
    }),
  ].join("\n");
}
