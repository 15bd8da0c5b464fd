/**
 * The figures of docs/membership.md, measured in the
 * simulator: traffic of a healthy cluster and time to detect a crash.
 *
 * @module
 */

import { GUARD_BOUNDS } from "../../core/options.ts";
import { Cluster } from "../faces/cluster.ts";
import { Report, waitFor } from "../scenarios/report.ts";
import { detect, settled } from "../scenarios/named.ts";

const PERIOD_MS = GUARD_BOUNDS.protocolPeriodMs.default;
const MEASURE_MS = 60_000;

/** Traffic of one node in a healthy cluster, averaged over its nodes. */
export interface TrafficFigure {
  /** Nodes in the cluster. */
  readonly size: number;
  /** Datagrams a node sends per protocol period. */
  readonly datagramsPerPeriod: number;
  /** Bytes a node sends per protocol period. */
  readonly bytesPerPeriod: number;
  /** The largest datagram any node sent. */
  readonly largestBytes: number;
}

/** Time from a crash to its detection, over several seeds. */
export interface DetectionFigure {
  /** Nodes in the cluster, the crashed one included. */
  readonly size: number;
  /** Runs measured. */
  readonly runs: number;
  /** Mean time until the first node declared the crashed one dead. */
  readonly firstMeanMs: number;
  /** Mean time until every node had. */
  readonly allMeanMs: number;
  /** The slowest run's time until every node had. */
  readonly allMaxMs: number;
}

/** Measures the traffic of a healthy cluster of `size` over a minute of virtual time. */
export function healthyTraffic(size: number, seed = 1): TrafficFigure {
  const cluster = new Cluster({ seed, size });
  waitFor(cluster, () => cluster.converged(), 20_000);
  cluster.runFor(10_000);
  cluster.resetTraffic();
  cluster.runFor(MEASURE_MS);
  let datagrams = 0;
  let bytes = 0;
  let largestBytes = 0;
  for (let i = 0; i < size; i++) {
    const traffic = cluster.traffic(i);
    datagrams += traffic.datagrams;
    bytes += traffic.bytes;
    largestBytes = Math.max(largestBytes, traffic.largestBytes);
  }
  const periods = size * (MEASURE_MS / PERIOD_MS);
  return {
    size,
    datagramsPerPeriod: datagrams / periods,
    bytesPerPeriod: bytes / periods,
    largestBytes,
  };
}

/** Crashes one node of a settled cluster of `size`, once per seed, and times its detection. */
export function crashDetection(size: number, runs = 10): DetectionFigure {
  const first: number[] = [];
  const all: number[] = [];
  for (let seed = 1; seed <= runs; seed++) {
    const cluster = settled(seed, size, new Report("figures", seed));
    const { firstMs, allMs } = detect(cluster, size - 1, 30_000);
    first.push(firstMs);
    all.push(allMs);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { size, runs, firstMeanMs: mean(first), allMeanMs: mean(all), allMaxMs: Math.max(...all) };
}

/** Every figure, as the Markdown that `docs/membership.md` shows. */
export function figuresMarkdown(): string {
  const traffic = [5, 50].map((n) => healthyTraffic(n));
  const detection = [5, 50].map((n) => crashDetection(n));
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const trafficTable = table([
    [
      "Healthy cluster",
      "Datagrams per node per period",
      "Bytes per node per period",
      "Largest datagram",
    ],
    ...traffic.map((t) => [
      `${t.size} nodes`,
      t.datagramsPerPeriod.toFixed(2),
      t.bytesPerPeriod.toFixed(0),
      `${t.largestBytes} B`,
    ]),
  ]);
  const detectionTable = table([
    [
      "Crash of one node",
      "First node to declare it dead (mean)",
      "Every node (mean)",
      "Every node (slowest of the runs)",
    ],
    ...detection.map((d) => [
      `${d.size} nodes, ${d.runs} seeds`,
      s(d.firstMeanMs),
      s(d.allMeanMs),
      s(d.allMaxMs),
    ]),
  ]);
  return `${trafficTable}\n\n${detectionTable}`;
}

/** A Markdown table padded as `deno fmt` pads it, so that written figures pass the format check. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(3, ...rows.map((row) => row[c].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, c) => cell.padEnd(widths[c])).join(" | ")} |`;
  return [line(rows[0]), line(widths.map((w) => "-".repeat(w))), ...rows.slice(1).map(line)].join(
    "\n",
  );
}

const BEGIN = "<!-- figures:begin";
const END = "<!-- figures:end -->";

/**
 * `document` with `figures` between its figure markers (by default
 * `<!-- figures:begin` and `<!-- figures:end -->`).
 *
 * @throws {RangeError} if `document` has no markers.
 */
export function withFigures(
  document: string,
  figures: string,
  markers: { readonly begin: string; readonly end: string } = { begin: BEGIN, end: END },
): string {
  const { begin: BEGIN, end: END } = markers;
  const begin = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (begin < 0 || end < begin) {
    throw new RangeError(`no "${BEGIN} … ${END}" markers in the document`);
  }
  const head = document.slice(0, document.indexOf("\n", begin) + 1);
  return `${head}\n${figures}\n\n${document.slice(end)}`;
}
