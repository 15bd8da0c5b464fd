/**
 * The accuracy table, rendered from runs of the scenarios, and written into
 * docs/accuracy.md between markers.
 *
 * @module
 */

import { SCENARIOS_5 } from "./five.ts";
import { type Outcome, run, type Scenario } from "./run.ts";
import { ENFORCED_RUN, SCALE_UP_5, SCENARIOS_50, SHADOW_RUN } from "./more.ts";
import { SCENARIOS_RULES } from "./rules.ts";
import { SCENARIOS_SHARED } from "./shared.ts";
import { SCENARIOS_REGIONS } from "./regions.ts";

/** The seed of the published table. */
export const TABLE_SEED = 1;

/** A scenario with its outcome. */
export interface Row {
  /** The scenario. */
  readonly scenario: Scenario;
  /** What it admitted. */
  readonly outcome: Outcome;
}

/** Every scenario of the table, in its order. */
export const TABLE_SCENARIOS: readonly Scenario[] = [
  ...SCENARIOS_5,
  ...SCENARIOS_RULES,
  ...SCENARIOS_50,
  SCALE_UP_5,
  ...SCENARIOS_SHARED,
  ...SCENARIOS_REGIONS,
];

/** Runs every scenario with `seed`; `onRow` hears of each as it finishes. */
export function runAll(
  seed: number,
  onRow?: (row: Row) => void,
): { rows: Row[]; shadow: Outcome; enforced: Outcome } {
  const rows: Row[] = [];
  for (const scenario of TABLE_SCENARIOS) {
    const row = { scenario, outcome: run(scenario, seed) };
    rows.push(row);
    onRow?.(row);
  }
  return { rows, shadow: run(SHADOW_RUN, seed), enforced: run(ENFORCED_RUN, seed) };
}

/** The rows as a Markdown table: its header, and a line each. */
export function renderRows(rows: readonly Row[]): string[] {
  const r2 = (x: number) => `${x.toFixed(2)} R`;
  return [
    "| Scenario | Design bound | Admitted, steady | Peak second | Seconds over 1.01 R | Settles in | False deaths |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(({ scenario: s, outcome: o }) =>
      `| ${s.label} | ${s.bound} | ${r2(o.steady)} | ${
        r2(o.peak)
      } | ${o.secondsOver} | ${o.settlesInS} s | ${o.falseDeaths} |`
    ),
  ];
}

/** The table as Markdown. */
export function renderTable(result: { rows: Row[]; shadow: Outcome; enforced: Outcome }): string {
  const lines = renderRows(result.rows);
  const shadow = result.shadow.shadowDeniedPerSec;
  const enforced = result.enforced.deniedPerSec;
  const diff = enforced === 0 ? 0 : ((shadow - enforced) / enforced) * 100;
  lines.push(
    "",
    `Shadow at R/5 beside skewed demand on R: shadow denials vs. denials with R/5 enforced, ` +
      `${shadow.toFixed(1)} vs. ${enforced.toFixed(1)} a second (${diff >= 0 ? "+" : ""}${
        diff.toFixed(1)
      }%).`,
  );
  return lines.join("\n");
}

/**
 * Replaces the text between `<!-- accuracy:start -->` and `<!-- accuracy:end -->`
 * (of `name` in the place of `accuracy`, if given).
 */
export function replaceTable(document: string, table: string, name = "accuracy"): string {
  const re = new RegExp(`(<!-- ${name}:start -->\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
  if (!re.test(document)) throw new Error(`no ${name} markers in the document`);
  // Blank lines around the table, as the Markdown formatter wants them.
  return document.replace(re, `$1\n${table}\n\n$2`);
}

/**
 * Whether `document` holds `table` between the markers of `name` already:
 * compared with runs of white space and of dashes collapsed, as the
 * formatter pads table cells and wraps prose.
 */
export function upToDate(document: string, table: string, name = "accuracy"): boolean {
  const norm = (text: string) => text.replace(/\s+/g, " ").replace(/-{3,}/g, "---");
  return norm(document) === norm(replaceTable(document, table, name));
}
