// The simulator's skewed scenario on real processes: N member processes on
// 127.0.0.1 (Deno, Bun and Node in turn, each a tests/support/fleet_member.ts
// with its guard gossiping over UDP), the limit R and the burst of
// src/sim/accuracy/run.ts, 1200 requests a second on member 0 and 150 on each
// other. Each member offers its own load with check() calls in its own
// process, on a 5 ms timer: a tenth of a millisecond of checks a second for
// the hot one, and the timer's wake-ups, next to the 10 ms or more a second
// an idle member spends anyway. An HTTP load generator for 8550 requests a
// second would have cost more CPU than the fleet it measures. Prints the fleet's
// admitted rate second by second, its mean and peak as multiples of R, the
// datagrams each member sends per period, and the CPU of an idle member.
//
// Run through bench/fleet_bench.ts: deno task bench:fleet50
import os from "node:os";
import process from "node:process";
import { LIMIT, R, skewed } from "../src/sim/accuracy/run.ts";
import { DEFAULT_PARTITION_POLICY } from "../src/core/options.ts";
import type { RuntimeName } from "../tests/support/process.ts";
import {
  latest,
  type Member,
  perSecondBetween,
  type Report,
  sleep,
  startFleet,
  stopAll,
  waitForSize,
} from "../tests/runtime/fleet_support.ts";
import { mean, printTable } from "./runtime.ts";

const RUNTIMES: readonly RuntimeName[] = ["deno", "bun", "node"];
/** Reports four times a second place each burst within a quarter second. */
const REPORT_MS = 250;
/**
 * How long news of the joins takes to stop riding on the probes (it is
 * retransmitted about 4·log N times), before the idle fleet is measured.
 */
const SETTLE_MS = 8_000;
/** How long the fleet is measured idle. */
const IDLE_MS = 10_000;
/** The steady window, as in the simulator: the last ten seconds of traffic. */
const STEADY_S = 10;
/** Members started at once: their start-up is the CPU-heavy part. */
const CONCURRENCY = 4;

export interface SkewedOptions {
  readonly members: number;
  readonly seconds: number;
  readonly periodMs: number;
}

/** Runs the bench, within a bound on its time, and stops every member however it ends. */
export async function skewedFleet(options: SkewedOptions): Promise<void> {
  const started: Member[] = [];
  // Members also leave when their stdin closes, so none outlives this
  // process, even one killed while the fleet is still starting.
  const abort = (why: string, code: number) => {
    console.error(why);
    stopAll(started);
    process.exit(code);
  };
  process.on("SIGINT", () => abort("interrupted: members stopped", 130));
  process.on("SIGTERM", () => abort("terminated: members stopped", 143));
  const loadBefore = os.loadavg()[0];
  const boundMs = options.members * 5_000 + SETTLE_MS + IDLE_MS + options.seconds * 1_000 + 60_000;
  const watchdog = setTimeout(() => abort(`over ${boundMs} ms: members stopped`, 1), boundMs);
  try {
    const runtimes = Array.from({ length: options.members }, (_, i) => RUNTIMES[i % 3]);
    started.push(
      ...await startFleet(new Array(options.members).fill(0), {
        limit: R,
        burst: LIMIT.burstSize(),
        policy: DEFAULT_PARTITION_POLICY.toString(),
        periodMs: options.periodMs,
        reportMs: REPORT_MS,
        runtimes,
        concurrency: CONCURRENCY,
      }),
    );
    print(await measure(started, options), loadBefore, runtimes, options);
  } finally {
    clearTimeout(watchdog);
    stopAll(started);
  }
}

interface Measured {
  readonly perSecond: number[];
  readonly idle: PerSecond[];
  readonly loaded: PerSecond[];
  /** Members that saw fewer members than started, at the end: false deaths. */
  readonly short: number;
  /** How the members fared, idle and under load. */
  readonly fared: { readonly idle: Fared; readonly loaded: Fared };
  readonly load: { readonly idle: number; readonly end: number };
}

async function measure(members: readonly Member[], options: SkewedOptions): Promise<Measured> {
  await waitForSize(members, members.length, 60_000);
  await sleep(SETTLE_MS);
  const idleFrom = members.map((m) => latest(m)!);
  const loadIdle = os.loadavg()[0];
  await sleep(IDLE_MS);
  const idleTo = members.map((m) => latest(m)!);
  const fromMs = Date.now();
  members.forEach((m, i) => m.process.send(`rate ${skewed(i)}`));
  await sleep(options.seconds * 1_000);
  const loadedTo = members.map((m) => latest(m)!);
  // The reports that cover the window's last moments.
  await sleep(2 * REPORT_MS);
  return {
    short: members.filter((m) => latest(m)!.clusterSize !== members.length).length,
    perSecond: admittedPerSecond(members, fromMs, options.seconds),
    idle: idleTo.map((r, i) => perSecondBetween(idleFrom[i], r)),
    loaded: loadedTo.map((r, i) => perSecondBetween(idleTo[i], r)),
    fared: {
      idle: fared(members, idleFrom[0].atMs, fromMs),
      loaded: fared(members, fromMs, fromMs + options.seconds * 1_000),
    },
    load: { idle: loadIdle, end: os.loadavg()[0] },
  };
}

interface Fared {
  /** The most members one member suspected at once. */
  readonly suspects: number;
  /** How late the members' report timers ran, mean and 99th percentile, ms. */
  readonly lateMs: readonly [mean: number, p99: number];
}

/**
 * What the members' reports in [fromMs, toMs) say of how they fared: a
 * starved machine runs their timers late, and a member that answers late
 * is suspected by its peers.
 */
function fared(members: readonly Member[], fromMs: number, toMs: number): Fared {
  let suspects = 0;
  const late: number[] = [];
  for (const m of members) {
    for (const r of m.reports()) {
      if (r.atMs < fromMs || r.atMs >= toMs) continue;
      suspects = Math.max(suspects, r.suspects);
      late.push(Math.max(0, r.spanMs - REPORT_MS));
    }
  }
  late.sort((a, b) => a - b);
  return { suspects, lateMs: [mean(late), late[Math.floor(late.length * 0.99)]] };
}

/**
 * The fleet's admissions in each second from `fromMs`: each report's count
 * spread evenly over the time it covers (a quarter second), clipped to the
 * start of the load, since nothing was offered before it.
 */
function admittedPerSecond(members: readonly Member[], fromMs: number, seconds: number): number[] {
  const bins = new Array<number>(seconds).fill(0);
  for (const m of members) {
    for (const r of m.reports()) spread(r, fromMs, bins);
  }
  return bins;
}

function spread(r: Report, fromMs: number, bins: number[]): void {
  const start = Math.max(r.atMs - r.spanMs, fromMs);
  if (r.admitted === 0 || r.atMs <= start) return;
  const perMs = r.admitted / (r.atMs - start);
  for (let s = Math.floor((start - fromMs) / 1_000); s < bins.length; s++) {
    const lo = Math.max(start, fromMs + s * 1_000);
    const hi = Math.min(r.atMs, fromMs + (s + 1) * 1_000);
    if (hi <= lo) break;
    bins[s] += perMs * (hi - lo);
  }
}

type PerSecond = ReturnType<typeof perSecondBetween>;

function print(
  m: Measured,
  loadBefore: number,
  runtimes: readonly RuntimeName[],
  options: SkewedOptions,
): void {
  const inR = (x: number) => `${(x / R).toFixed(2)} R`;
  const perPeriod = (xs: PerSecond[]) =>
    (mean(xs.map((x) => x.datagrams)) * options.periodMs / 1_000).toFixed(2);
  const cpu = (xs: PerSecond[]) => mean(xs.map((x) => x.cpuMs)).toFixed(2);
  const byRuntime = (xs: PerSecond[]) =>
    RUNTIMES.map((rt) => `${rt} ${cpu(xs.filter((_, i) => runtimes[i] === rt))}`).join(", ");
  const count = (rt: RuntimeName) => runtimes.filter((r) => r === rt).length;
  const offered = runtimes.reduce((sum, _, i) => sum + skewed(i), 0);
  const steady = m.perSecond.slice(-Math.min(STEADY_S, m.perSecond.length));
  const late = (f: Fared) => `${f.lateMs[0].toFixed(0)} / ${f.lateMs[1].toFixed(0)} ms`;
  const bytes = (xs: PerSecond[]) => mean(xs.map((x) => x.bytes)).toFixed(0);
  console.log(
    `${runtimes.length} member processes on loopback (${count("deno")} Deno, ${count("bun")} Bun, ${
      count("node")
    } Node), period ${options.periodMs} ms, R = ${R}/s with a burst of ${LIMIT.burstSize()} on each; ${os.cpus().length} cores, load average ${
      loadBefore.toFixed(2)
    } before the members started, ${m.load.idle.toFixed(2)} once idle and ${
      m.load.end.toFixed(2)
    } at the end:\n`,
  );
  printTable([
    [`offered: ${skewed(0)}/s on one member, ${skewed(1)}/s on each other`, inR(offered)],
    [`admitted, mean over ${options.seconds} s`, inR(mean(m.perSecond))],
    [`admitted, mean over the last ${steady.length} s`, inR(mean(steady))],
    ["admitted, peak second", inR(Math.max(...m.perSecond))],
    ["datagrams sent per member per period, idle", perPeriod(m.idle)],
    ["datagrams sent per member per period, under load", perPeriod(m.loaded)],
    [
      "bytes sent per member per second, idle / under load",
      `${bytes(m.idle)} / ${bytes(m.loaded)}`,
    ],
    ["CPU of an idle member, ms per second", `${cpu(m.idle)} (${byRuntime(m.idle)})`],
    [
      "CPU of a member under load, ms per second",
      `${cpu(m.loaded)} (the hot one ${m.loaded[0].cpuMs.toFixed(2)})`,
    ],
    [
      "most members one member suspected at once, idle / under load",
      `${m.fared.idle.suspects} / ${m.fared.loaded.suspects}`,
    ],
    [
      `a member's ${REPORT_MS} ms timer late by, mean / 99th percentile, idle`,
      late(m.fared.idle),
    ],
    ["likewise under load", late(m.fared.loaded)],
    [`members that saw fewer than ${runtimes.length} at the end`, String(m.short)],
  ]);
  console.log(
    `\nadmitted per second, in R: ${m.perSecond.map((x) => (x / R).toFixed(2)).join(" ")}`,
  );
}
