// A five-instance fleet on loopback: four member processes and this one.
// Prints check() on a hot key while gossip runs, next to a standalone
// guard's in the same process; gossip datagrams and bytes per instance per
// second; and the CPU time an idle member spends per second (its
// background task, and the runtime's own idle work).
//
//   deno task bench:fleet     (or: bun bench/fleet_bench.ts, npx tsx bench/fleet_bench.ts)
//
// With --members N it runs bench/fleet_skewed.ts instead: N member
// processes of Deno, Bun and Node under the simulator's skewed demand.
//
//   deno task bench:fleet50   (--members 50 --seconds 30)
import process from "node:process";
import { parseArgs } from "node:util";
import { GossipAuth, Guard, Limit } from "../mod.ts";
import {
  latest,
  type Member,
  perSecondBetween,
  sleep,
  startFleet,
  stopAll,
} from "../tests/runtime/fleet_support.ts";
import { GUARD_BOUNDS } from "../src/core/options.ts";
import { mean, printTable, runtimeName } from "./runtime.ts";
import { skewedFleet } from "./fleet_skewed.ts";

const MEASURE_MS = 10_000;
/** The protocol period of both benches: the default. */
const PERIOD_MS = GUARD_BOUNDS.protocolPeriodMs.default;

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { members: { type: "string" }, seconds: { type: "string", default: "30" } },
});
if (values.members !== undefined) {
  await skewedFleet({
    members: count(values.members, "--members", 2),
    seconds: count(values.seconds, "--seconds", 5),
    periodMs: PERIOD_MS,
  });
} else {
  await fiveInstances();
}
process.exit(0);

function count(text: string, flag: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > 1_000) {
    throw new RangeError(`${flag} must be a whole number from ${min} to 1000, not ${text}`);
  }
  return n;
}

async function fiveInstances(): Promise<void> {
  const members: Member[] = await startFleet([0, 0, 0, 0], {
    limit: 1_000_000,
    periodMs: PERIOD_MS,
  });
  try {
    const guard = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off)
      .seeds([members[0].address])
      .limit(1_000_000).protocolPeriodMs(PERIOD_MS).spawn();
    const standalone = await Guard.builder().defaultLimit(Limit.perSecond(1_000_000)).spawn();
    while (guard.clusterSize() < 5) await sleep(100);
    // Make the key hot: enough traffic to pass its cold share.
    for (let i = 0; i < 300_000; i++) guard.check("api:tenant-42");
    await sleep(1_000);

    const first = members.map((m) => latest(m)!);
    const sentBefore = guard.traffic()!;
    const timed = await timeChecks(guard, standalone);
    const sent = guard.traffic()!;
    const busy = {
      datagrams: (sent.datagramsSent - sentBefore.datagramsSent) / timed.seconds,
      bytes: (sent.bytesSent - sentBefore.bytesSent) / timed.seconds,
    };
    const idle = members.map((m, i) => perSecondBetween(first[i], latest(m)!));
    printFive(timed, idle, busy);
    await guard.leave();
    await standalone.leave();
  } finally {
    stopAll(members);
  }
}

interface Timed {
  /** ns per check() of the guard in the fleet, one figure per round. */
  readonly fleetNs: number[];
  /** Likewise of the standalone guard. */
  readonly aloneNs: number[];
  readonly seconds: number;
}

/** Times check() on a hot key of both guards, in interleaved rounds. */
async function timeChecks(guard: Guard, standalone: Guard): Promise<Timed> {
  const t0 = performance.now();
  const fleetNs: number[] = [];
  const aloneNs: number[] = [];
  // Short rounds, so that the timer and the socket of the busy instance
  // run on time: a late ack would look like a lost one to its peers.
  const ops = 100_000;
  while (performance.now() - t0 < MEASURE_MS) {
    for (const [g, out] of [[guard, fleetNs], [standalone, aloneNs]] as const) {
      const s = performance.now();
      let n = 0;
      for (let i = 0; i < ops; i++) if (g.check("api:tenant-42").allowed) n++;
      out.push(((performance.now() - s) * 1e6) / ops);
      if (n < 0) console.log(n);
    }
    await sleep(5);
  }
  return { fleetNs, aloneNs, seconds: (performance.now() - t0) / 1000 };
}

function printFive(
  timed: Timed,
  idle: ReturnType<typeof perSecondBetween>[],
  busy: { datagrams: number; bytes: number },
): void {
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const hot = median(timed.fleetNs);
  const alone = median(timed.aloneNs);
  const datagrams = mean(idle.map((p) => p.datagrams));
  console.log(
    `A five-instance fleet on loopback, ${runtimeName()}, protocol period ${PERIOD_MS} ms, ${
      timed.seconds.toFixed(0)
    } s:\n`,
  );
  const rows: [string, string][] = [
    ["check(), hot key, gossip running", `${hot.toFixed(1)} ns`],
    ["check(), standalone guard, same process", `${alone.toFixed(1)} ns`],
    ["cost of gossip running on check()", `${(((hot - alone) / alone) * 100).toFixed(1)}%`],
    ["gossip datagrams sent per instance per second (idle members)", datagrams.toFixed(1)],
    ["per protocol period", (datagrams * PERIOD_MS / 1000).toFixed(2)],
    ["gossip bytes sent per instance per second", mean(idle.map((p) => p.bytes)).toFixed(0)],
    ["datagrams sent per second by the busy instance (a hot key)", busy.datagrams.toFixed(1)],
    ["bytes sent per second by the busy instance", busy.bytes.toFixed(0)],
    ["CPU of an idle member process, ms per second", mean(idle.map((p) => p.cpuMs)).toFixed(2)],
  ];
  printTable(rows);
}
