/**
 * The simulator's command line: `deno task sim` (or `bun src/sim/cli.ts`,
 * `tsx src/sim/cli.ts`).
 *
 *     sim                       the scenarios, and how to run them
 *     sim <scenario> [--seed N] one named scenario
 *     sim all [--seed N]        every named scenario
 *     sim chaos --seed N        one random run of every fault, with its log
 *     sim swarm [--runs N] [--seed N]  N chaos runs from consecutive seeds
 *     sim figures [--write F]   the figures of docs/membership.md, written into F
 *     sim figures --large [--sizes 200,1000] [--write F]   at large sizes (minutes)
 *     sim relay-room [--sizes 200,1000,2000] [--settle S] [--window S] [--write F]
 *                               how fresh the relay keeps reports (an hour)
 *
 * Exits with 1 when a run fails, after printing the command that replays it.
 *
 * @module
 */

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { chaos } from "./scenarios/chaos.ts";
import { figuresMarkdown, withFigures } from "./figures/membership.ts";
import { LARGE_MARKERS, LARGE_SIZES, largeFiguresMarkdown } from "./figures/membership_large.ts";
import {
  RELAY_ROOM_MARKERS,
  RELAY_ROOM_SIZES,
  relayRoom,
  relayRoomTable,
} from "./figures/relay_room.ts";
import { type ScenarioResult, summarize } from "./scenarios/report.ts";
import { runScenario, SCENARIOS } from "./scenarios/named.ts";

function usage(): string {
  const names = SCENARIOS.map((s) => `  ${s.name.padEnd(16)} ${s.description}`);
  return [
    "usage: deno task sim <scenario|all|chaos|swarm|figures|relay-room> [--seed N] [--runs N] [--write FILE]",
    "",
    "scenarios:",
    ...names,
    `  ${
      "chaos".padEnd(16)
    } a random mix of every fault for a minute, then agreement after healing`,
  ].join("\n");
}

function main(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      seed: { type: "string" },
      runs: { type: "string" },
      write: { type: "string" },
      large: { type: "boolean" },
      settle: { type: "string" },
      window: { type: "string" },
      sizes: { type: "string" },
    },
  });
  const command = positionals[0];
  // A swarm without a seed starts anywhere; the seeds it prints replay it.
  const seed = Number(values.seed ?? (command === "swarm" ? Date.now() % 1_000_000 : 1));
  const runs = Number(values.runs ?? 100);
  if (!Number.isInteger(seed) || !Number.isInteger(runs) || runs < 1) {
    console.error(`--seed and --runs take whole numbers\n\n${usage()}`);
    return 2;
  }
  const results: ScenarioResult[] = [];
  const report = (result: ScenarioResult) => {
    results.push(result);
    console.log(summarize(result));
  };
  if (command === "figures" || command === "relay-room") {
    const defaults = command === "figures" ? LARGE_SIZES : RELAY_ROOM_SIZES;
    const sizes = values.sizes?.split(",").map(Number) ?? defaults;
    if (!sizes.every((n) => Number.isInteger(n) && n >= 2)) {
      console.error(`--sizes takes whole numbers of at least 2, got ${values.sizes}`);
      return 2;
    }
    const previous = values.write ? readFileSync(values.write, "utf8") : "";
    let figures: string, markers;
    if (command === "relay-room") {
      // Taken first: the sources may change while the runs take their hour.
      const commit = commitOfHead();
      const runs = sizes.map((n) => {
        const run = relayRoom(n, {
          seed,
          settleMs: seconds(values.settle),
          windowMs: seconds(values.window),
          trace: (ms, unbelieved) =>
            console.error(`  ${ms / 1000} s: ${(100 * unbelieved).toFixed(2)}% with none believed`),
        });
        console.error(`relay-room: ${n} members measured`);
        return run;
      });
      figures = relayRoomTable(runs, commit, previous);
      markers = RELAY_ROOM_MARKERS;
    } else {
      figures = values.large ? largeFiguresMarkdown(sizes, previous) : figuresMarkdown();
      markers = values.large ? LARGE_MARKERS : undefined;
    }
    if (values.write) {
      const document = readFileSync(values.write, "utf8");
      writeFileSync(values.write, withFigures(document, figures, markers));
    }
    console.log(figures);
    return 0;
  } else if (command === "all") {
    for (const scenario of SCENARIOS) report(scenario.run(seed));
  } else if (command === "chaos") {
    report(chaos(seed, (line) => console.log(`  ${line}`)));
  } else if (command === "swarm") {
    console.log(`swarm: ${runs} chaos runs from seed ${seed}`);
    for (let i = 0; i < runs; i++) {
      const result = chaos(seed + i);
      if (!result.ok) report(result);
      else results.push(result);
    }
    console.log(`${results.filter((r) => r.ok).length} of ${runs} runs agreed after healing`);
  } else if (command && SCENARIOS.some((s) => s.name === command)) {
    report(runScenario(command, seed));
  } else if (command) {
    console.error(`no scenario or command "${command}"\n\n${usage()}`);
    return 2;
  } else {
    console.log(usage());
    return 0;
  }
  return results.every((r) => r.ok) ? 0 : 1;
}

/** `--settle` or `--window`, seconds, in ms; undefined for the default when not given. */
function seconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const s = Number(value);
  if (!(s >= 0)) throw new RangeError(`--settle and --window take seconds, got ${value}`);
  return s * 1_000;
}

/** The commit the figures were measured at, `+` after it when the sources differ from it. */
function commitOfHead(): string {
  const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();
  return git("rev-parse", "--short", "HEAD") + (git("status", "--porcelain", "src") ? "+" : "");
}

process.exitCode = main(process.argv.slice(2));
