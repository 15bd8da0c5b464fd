/**
 * The figures of docs/fleet-rules.md: how long a bulk change of key limits
 * made on one node takes to reach every node, and a newcomer to learn the
 * table, and the bytes both cost, at 5 and 50 nodes, on virtual time.
 *
 *     deno run -A --v8-flags=--expose-gc src/sim/rules_figures.ts \
 *       [--sizes 10,10000,1000000] [--nodes 5,50] [--max-entries 5000000] [--write]
 *
 * `--write` puts the table into docs/fleet-rules.md between its markers.
 * A row whose nodes × key limits passes `--max-entries` is left out: the
 * simulator holds every node's book and table in one process, about 300
 * bytes a key limit a node (the heap column, measured when `gc` is exposed).
 *
 * @module
 */

import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { Limit } from "../core/limit.ts";
import { RulesFleet } from "./rules_fleet.ts";

/** One measured row. */
export interface RulesFigure {
  /** Nodes in the fleet. */
  readonly nodes: number;
  /** Key limits set at once on one node. */
  readonly keyLimits: number;
  /** Virtual ms until every node held them all. */
  readonly spreadMs: number | undefined;
  /** Bytes every node sent meanwhile, beyond what a quiet fleet sends. */
  readonly spreadBytes: number;
  /** Virtual ms a newcomer took to learn the table (out of its rules hold). */
  readonly learnMs: number | undefined;
  /** Bytes sent meanwhile, beyond a quiet fleet's. */
  readonly learnBytes: number;
  /** Heap a key limit takes on a node, bytes (books and tables), when `gc` is exposed. */
  readonly heapBytes: number | undefined;
}

const SEED = 17;
const LIMIT_MS = 600_000;

/**
 * Measures one row: `keyLimits` set on node 0 of a formed fleet of `nodes`,
 * then one newcomer.
 */
export function measure(nodes: number, keyLimits: number): RulesFigure {
  const fleet = new RulesFleet({ seed: SEED, size: nodes, maxKeyLimits: Math.max(keyLimits, 1) });
  fleet.runUntilConverged(60_000);
  fleet.driver.runUntil(fleet.driver.nowMs + 10_000);
  const quietPerMs = quietBytesPerMs(fleet);
  fleet.driver.resetTraffic();
  let startMs = fleet.driver.nowMs;
  const heapBefore = heapUsed();
  for (let i = 0; i < keyLimits; i++) {
    fleet.setKeyLimit(0, "", `user:${i}`, Limit.perSecond(1 + (i % 1_000)));
  }
  const spreadMs = fleet.runUntilConverged(LIMIT_MS);
  const spreadBytes = extra(fleet, quietPerMs, fleet.driver.nowMs - startMs);
  const heapAfter = heapUsed();
  const heapBytes = heapBefore === undefined || heapAfter === undefined
    ? undefined
    : (heapAfter - heapBefore) / (keyLimits * nodes);
  fleet.driver.runUntil(fleet.driver.nowMs + 5_000);
  fleet.driver.resetTraffic();
  startMs = fleet.driver.nowMs;
  const late = fleet.driver.add({ seeds: [1] });
  let learnMs: number | undefined;
  for (let t = 0; t <= LIMIT_MS; t += 50) {
    fleet.driver.runUntil(startMs + t);
    const s = fleet.stats(late);
    if (s?.rulesLearning === false && s.rulesLive === keyLimits) {
      learnMs = t;
      break;
    }
  }
  const learnBytes = extra(fleet, quietPerMs, fleet.driver.nowMs - startMs);
  if (learnMs !== undefined && fleet.book(late).keyLimits().length !== keyLimits) {
    throw new Error(`the newcomer's table holds ${keyLimits} key limits, its book not`);
  }
  return { nodes, keyLimits, spreadMs, spreadBytes, learnMs, learnBytes, heapBytes };
}

/** The heap in use after a full collection, when the runtime exposes `gc`; else undefined. */
function heapUsed(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  return process.memoryUsage().heapUsed;
}

function quietBytesPerMs(fleet: RulesFleet): number {
  fleet.driver.resetTraffic();
  const windowMs = 10_000;
  fleet.driver.runUntil(fleet.driver.nowMs + windowMs);
  return fleet.traffic().bytes / windowMs;
}

function extra(fleet: RulesFleet, quietPerMs: number, ms: number): number {
  return Math.max(0, Math.round(fleet.traffic().bytes - quietPerMs * ms));
}

/** The rows as a markdown table. */
export function figuresTable(rows: readonly RulesFigure[]): string {
  const ms = (
    v: number | undefined,
  ) => (v === undefined ? "did not" : `${(v / 1_000).toFixed(2)} s`);
  const kb = (b: number) => `${(b / 1_024).toFixed(0)} KiB`;
  // Below 10,000 key limits a node's share of the heap is noise.
  const heap = (r: RulesFigure) =>
    r.heapBytes === undefined || r.keyLimits < 10_000 ? "–" : `${r.heapBytes.toFixed(0)} B`;
  return [
    "| nodes | key limits | every node has them | bytes for it | a newcomer learns them | bytes for it | heap a key limit a node |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.nodes} | ${r.keyLimits.toLocaleString("en-US")} | ${ms(r.spreadMs)} | ${
        kb(r.spreadBytes)
      } | ${ms(r.learnMs)} | ${kb(r.learnBytes)} | ${heap(r)} |`
    ),
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      sizes: { type: "string", default: "10,10000,1000000" },
      nodes: { type: "string", default: "5,50" },
      "max-entries": { type: "string", default: "5000000" },
      write: { type: "boolean" },
    },
  });
  const rows: RulesFigure[] = [];
  for (const nodes of values.nodes.split(",").map(Number)) {
    for (const size of values.sizes.split(",").map(Number)) {
      if (nodes * size > Number(values["max-entries"])) {
        console.error(`left out: ${nodes} nodes × ${size} key limits passes --max-entries`);
        continue;
      }
      rows.push(measure(nodes, size));
      console.error(`measured ${nodes} nodes, ${size} key limits`);
    }
  }
  const table = figuresTable(rows);
  console.log(table);
  if (values.write) {
    const file = "docs/fleet-rules.md";
    const [start, end] = ["<!-- rules-figures:start -->", "<!-- rules-figures:end -->"];
    const text = readFileSync(file, "utf8");
    const at = text.indexOf(start), to = text.indexOf(end);
    if (at < 0 || to < at) throw new Error(`${file}: no ${start} … ${end} markers`);
    writeFileSync(file, `${text.slice(0, at + start.length)}\n${table}\n${text.slice(to)}`);
  }
}
