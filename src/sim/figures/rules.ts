/**
 * The figures of docs/fleet-rules.md: how long a bulk change of key limits
 * made on one node takes to reach every node, and a newcomer to learn the
 * table, and the bytes both cost, at 5 and 50 nodes, on virtual time.
 *
 *     deno run -A --v8-flags=--expose-gc src/sim/figures/rules.ts \
 *       [--sizes 10,10000,1000000] [--nodes 5,50] [--max-entries 5000000] [--write]
 *
 * `--write` puts the rows into the table of docs/fleet-rules.md between
 * its markers, in place of the rows of the same nodes and key limits (the
 * others stay). A row whose nodes × key limits passes `--max-entries` is
 * left out: the simulator holds every node's book and table in one
 * process, some 110 to 125 bytes a key limit a node (the memory column, measured
 * when `gc` is exposed), so a million at 50 nodes took 9.3 GB at its peak
 * (`--max-entries 60000000 --v8-flags=--expose-gc,--max-old-space-size=12000`).
 *
 * @module
 */

import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { parseArgs } from "node:util";
import { Limit } from "../../core/limit.ts";
import { RulesFleet } from "../faces/rules_fleet.ts";

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
  /** Memory a key limit takes on a node, bytes (books and tables), when `gc` is exposed. */
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
  fleet.runUntil(fleet.nowMs + 10_000);
  const quietPerMs = quietBytesPerMs(fleet);
  fleet.resetTraffic();
  let startMs = fleet.nowMs;
  const heapBefore = heapUsed();
  for (let i = 0; i < keyLimits; i++) {
    fleet.setKeyLimit(0, "", `user:${i}`, Limit.perSecond(1 + (i % 1_000)));
  }
  const spreadMs = fleet.runUntilConverged(LIMIT_MS);
  const spreadBytes = extra(fleet, quietPerMs, fleet.nowMs - startMs);
  const heapAfter = heapUsed();
  const heapBytes = heapBefore === undefined || heapAfter === undefined
    ? undefined
    : (heapAfter - heapBefore) / (keyLimits * nodes);
  fleet.runUntil(fleet.nowMs + 5_000);
  fleet.resetTraffic();
  startMs = fleet.nowMs;
  const late = fleet.add({ seeds: [1] });
  let learnMs: number | undefined;
  for (let t = 0; t <= LIMIT_MS; t += 50) {
    fleet.runUntil(startMs + t);
    const s = fleet.stats(late);
    if (s?.rules.learning === false && s.rules.live === keyLimits) {
      learnMs = t;
      break;
    }
  }
  const learnBytes = extra(fleet, quietPerMs, fleet.nowMs - startMs);
  if (learnMs !== undefined && fleet.book(late).keyLimits().length !== keyLimits) {
    throw new Error(`the newcomer's table holds ${keyLimits} key limits, its book not`);
  }
  return { nodes, keyLimits, spreadMs, spreadBytes, learnMs, learnBytes, heapBytes };
}

/**
 * The memory in use after a full collection, when the runtime exposes
 * `gc`, else undefined: the heap, and what lies outside it (the buffers of
 * the table's typed columns).
 */
function heapUsed(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

function quietBytesPerMs(fleet: RulesFleet): number {
  fleet.resetTraffic();
  const windowMs = 10_000;
  fleet.runUntil(fleet.nowMs + windowMs);
  return fleet.totalTraffic().bytes / windowMs;
}

function extra(fleet: RulesFleet, quietPerMs: number, ms: number): number {
  return Math.max(0, Math.round(fleet.totalTraffic().bytes - quietPerMs * ms));
}

const HEADER = [
  "nodes",
  "key limits",
  "every node has them",
  "bytes for it",
  "a newcomer learns them",
  "bytes for it",
  "memory a key limit a node",
];

/** A row's cells, as the table prints them. */
function cells(r: RulesFigure): string[] {
  const ms = (v: number | undefined) => v === undefined ? "did not" : `${(v / 1_000).toFixed(2)} s`;
  const kb = (b: number) => `${(b / 1_024).toFixed(0)} KiB`;
  // Below 10,000 key limits a node's share of the memory is noise.
  const memory = r.heapBytes === undefined || r.keyLimits < 10_000
    ? "–"
    : `${r.heapBytes.toFixed(0)} B`;
  const size = r.keyLimits.toLocaleString("en-US");
  return [`${r.nodes}`, size, ms(r.spreadMs), kb(r.spreadBytes), ms(r.learnMs), kb(r.learnBytes)]
    .concat(memory);
}

/** Rows of cells as a markdown table, by nodes, then key limits. */
function markdown(rows: readonly string[][]): string {
  const order = (row: string[]) => [Number(row[0]), Number(row[1].replaceAll(",", ""))];
  const sorted = [...rows].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0] - y[0] || x[1] - y[1];
  });
  return [HEADER, HEADER.map(() => "---:"), ...sorted].map((row) => `| ${row.join(" | ")} |`)
    .join("\n");
}

/** The rows as a markdown table. */
export function figuresTable(rows: readonly RulesFigure[]): string {
  return markdown(rows.map(cells));
}

/**
 * `rows` merged into the markdown table `old`: a row measured again
 * replaces the row of its nodes and key limits, the others stay, so that
 * one row can be measured on its own.
 */
export function mergeFigures(old: string, rows: readonly RulesFigure[]): string {
  const byRow = new Map<string, string[]>();
  const name = (row: string[]) => `${row[0]}×${row[1]}`;
  for (const line of old.split("\n").slice(2)) {
    const row = line.split("|").slice(1, -1).map((cell) => cell.trim());
    if (row.length === HEADER.length) byRow.set(name(row), row);
  }
  for (const row of rows.map(cells)) byRow.set(name(row), row);
  return markdown([...byRow.values()]);
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
  console.log(figuresTable(rows));
  if (values.write) {
    const file = "docs/fleet-rules.md";
    const [start, end] = ["<!-- rules-figures:start -->", "<!-- rules-figures:end -->"];
    const text = readFileSync(file, "utf8");
    const at = text.indexOf(start), to = text.indexOf(end);
    if (at < 0 || to < at) throw new Error(`${file}: no ${start} … ${end} markers`);
    const table = mergeFigures(text.slice(at + start.length, to).trim(), rows);
    writeFileSync(file, `${text.slice(0, at + start.length)}\n\n${table}\n\n${text.slice(to)}`);
  }
}
