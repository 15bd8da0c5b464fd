/**
 * `deno task accuracy [--write | --check] [--seed n] [--scenario id [--relay on|off]]`:
 * runs the accuracy scenarios in the simulator and prints the table.
 * `--write` puts it into README.md and docs/accuracy.md; `--check` fails
 * (exit 1) when they are out of date or a row breaks its design bound.
 *
 * @module
 */

import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { run } from "./accuracy.ts";
import {
  renderTable,
  replaceTable,
  runAll,
  TABLE_SCENARIOS,
  TABLE_SEED,
} from "./accuracy_table.ts";
import { messageOf } from "../core/errors.ts";

const FILES = ["README.md", "docs/accuracy.md"];

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
  if (values.scenario !== undefined) {
    const s = TABLE_SCENARIOS.find((x) => x.id === values.scenario);
    if (!s) {
      console.error(
        `accuracy: no scenario ${values.scenario}; one of ${
          TABLE_SCENARIOS.map((x) => x.id).join(", ")
        }`,
      );
      return 2;
    }
    if (values.relay !== undefined && values.relay !== "on" && values.relay !== "off") {
      console.error(`accuracy: --relay must be on or off, got ${values.relay}`);
      return 2;
    }
    const o = run(s, seed, { relay: values.relay !== "off" });
    console.log(
      `${s.label}, seed ${seed}: steady ${o.steady.toFixed(3)} R, peak ${o.peak.toFixed(3)} R, ` +
        `${o.secondsOver} s over 1.01 R, settles in ${o.settlesInS} s; ${
          s.holds(o) ? "within" : "BREAKS"
        } its bound (${s.bound})`,
    );
    console.log(
      `admitted a second, in R, from the start of traffic: ${
        o.perSecond.map((x) => x.toFixed(2)).join(" ")
      }`,
    );
    return s.holds(o) ? 0 : 1;
  }
  const result = runAll(seed);
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
    // The formatter pads table cells and wraps prose: compare with runs of
    // white space and of dashes collapsed.
    const norm = (text: string) => text.replace(/\s+/g, " ").replace(/-{3,}/g, "---");
    const stale = FILES.filter((f) => {
      const text = readFileSync(f, "utf8");
      return norm(text) !== norm(replaceTable(text, table));
    });
    if (stale.length > 0) {
      console.error(`accuracy: ${stale.join(", ")} out of date; run deno task accuracy --write`);
      return 1;
    }
  }
  return broken.length === 0 ? 0 : 1;
}

process.exit(main());
