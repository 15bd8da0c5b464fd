/**
 * `deno task accuracy [--write | --check] [--seed n] [--scenario id [--relay on|off]]`:
 * runs the accuracy scenarios in the simulator and prints the table, each
 * row's wall time on stderr. `--scenario` runs one row (of the table, or of
 * the rows at 200 and 1000 nodes) and prints its verdict; `--large [--sizes
 * 200,1000]` runs the rows at 200 and 1000 nodes, with `--write` or `--check`
 * on their own tables in docs/accuracy.md; `--large --seeds 1,2,3` runs
 * them on each seed and prints the worst of each row (`deno task
 * accuracy:seeds`, the 1000-node rows; not in CI).
 * `--write` puts the table into docs/accuracy.md, its one home; `--check` fails
 * (exit 1) when they are out of date or a row breaks its design bound.
 *
 * @module
 */

import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { type Outcome, run, type Scenario } from "./run.ts";
import { LARGE_ROWS, largeTable, seedsTable } from "./large_table.ts";
import {
  renderTable,
  replaceTable,
  runAll,
  TABLE_SCENARIOS,
  TABLE_SEED,
  upToDate,
} from "./table.ts";
import { messageOf } from "../../core/errors.ts";

const FILES = ["docs/accuracy.md"];

function main(): number {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        write: { type: "boolean" },
        check: { type: "boolean" },
        seed: { type: "string" },
        scenario: { type: "string" },
        relay: { type: "string" },
        large: { type: "boolean" },
        sizes: { type: "string" },
        seeds: { type: "string" },
      },
    }));
  } catch (e) {
    console.error(`accuracy: ${messageOf(e)}`);
    return 2;
  }
  const seed = values.seed === undefined ? TABLE_SEED : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) {
    console.error(`accuracy: --seed must be a whole number, got ${values.seed}`);
    return 2;
  }
  const replay = `deno task accuracy --seed ${seed}`;
  if (values.relay !== undefined && values.relay !== "on" && values.relay !== "off") {
    console.error(`accuracy: --relay must be on or off, got ${values.relay}`);
    return 2;
  }
  const relay = values.relay !== "off";
  if (values.large) {
    // Minutes of CPU: a task and a table of their own (large_table.ts).
    const sizes = values.sizes?.split(",").map(Number) ?? [...LARGE_ROWS.keys()];
    if (!sizes.every((n) => LARGE_ROWS.has(n))) {
      console.error(`accuracy: --sizes takes ${[...LARGE_ROWS.keys()].join(", ")}`);
      return 2;
    }
    const mode = { write: values.write, check: values.check };
    if (values.seeds !== undefined) {
      const seeds = values.seeds.split(",").map(Number);
      if (!seeds.every((x) => Number.isInteger(x) && x >= 0)) {
        console.error(`accuracy: --seeds takes whole numbers, got ${values.seeds}`);
        return 2;
      }
      const held = sizes.map((n) =>
        seedsTable(n, seeds, (s, seed) => verdict(s, seed, relay).outcome, mode)
      );
      return held.every((ok) => ok) ? 0 : 1;
    }
    const held = sizes.map((n) => largeTable(n, (s) => verdict(s, seed, relay).outcome, mode));
    return held.every((ok) => ok) ? 0 : 1;
  }
  if (values.scenario !== undefined) {
    const all = [...TABLE_SCENARIOS, ...[...LARGE_ROWS.values()].flat()];
    const s = all.find((x) => x.id === values.scenario);
    if (!s) {
      console.error(
        `accuracy: no scenario ${values.scenario}; one of ${all.map((x) => x.id).join(", ")}`,
      );
      return 2;
    }
    return verdict(s, seed, relay, true).holds ? 0 : 1;
  }
  let startedMs = performance.now();
  // Each row's wall time on stderr, so that the table on stdout stays what is written.
  const result = runAll(seed, ({ scenario }) => {
    console.error(`accuracy: ${scenario.id}: ${wallTime(startedMs)}`);
    startedMs = performance.now();
  });
  const table = renderTable(result);
  console.log(table);
  const broken = result.rows.filter((r) => !r.scenario.holds(r.outcome));
  for (const r of broken) {
    console.error(
      `accuracy: ${r.scenario.label} breaks its bound (${r.scenario.bound}); replay: ${replay} --scenario ${r.scenario.id}`,
    );
  }
  if (values.write) {
    for (const f of FILES) writeFileSync(f, replaceTable(readFileSync(f, "utf8"), table));
    console.error(`accuracy: wrote ${FILES.join(" and ")}`);
  }
  if (values.check) {
    const stale = FILES.filter((f) => !upToDate(readFileSync(f, "utf8"), table));
    if (stale.length > 0) {
      console.error(`accuracy: ${stale.join(", ")} out of date; run deno task accuracy --write`);
      return 1;
    }
  }
  return broken.length === 0 ? 0 : 1;
}

/** Runs `s` and prints its figures and verdict, its seconds one by one if `seconds`. */
function verdict(
  s: Scenario,
  seed: number,
  relay: boolean,
  seconds = false,
): { outcome: Outcome; holds: boolean } {
  const startedMs = performance.now();
  const cpu = process.cpuUsage();
  const o = run(s, seed, { relay });
  console.log(
    `${s.label}, seed ${seed}: steady ${o.steady.toFixed(3)} R, peak ${o.peak.toFixed(3)} R, ` +
      `${o.secondsOver} s over 1.01 R, settles in ${o.settlesInS} s, ` +
      `${o.falseDeaths} false deaths; ${s.holds(o) ? "within" : "BREAKS"} its bound (${s.bound}); ${
        wallTime(startedMs)
      }, ${cpuTime(cpu)}`,
  );
  if (seconds) {
    console.log(
      `admitted a second, in R, from the start of traffic: ${
        o.perSecond.map((x) => x.toFixed(2)).join(" ")
      }`,
    );
  }
  return { outcome: o, holds: s.holds(o) };
}

/** CPU time of the process since `from`, user and system: on a shared machine, the figure to compare. */
function cpuTime(from: NodeJS.CpuUsage): string {
  const { user, system } = process.cpuUsage(from);
  return `${((user + system) / 1e6).toFixed(1)} s of CPU`;
}

/** Wall time since `startedMs`, as the command prints it. */
function wallTime(startedMs: number): string {
  return `${((performance.now() - startedMs) / 1_000).toFixed(1)} s of wall time`;
}

process.exit(main());
