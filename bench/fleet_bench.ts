// A five-instance fleet on loopback: four member processes and this one.
// Prints check() on a hot key while gossip runs, next to a standalone
// guard's in the same process; gossip datagrams and bytes per instance per
// second; and the CPU time an idle member spends per second (its
// background task, and the runtime's own idle work).
//
//   deno task bench:fleet     (or: bun bench/fleet_bench.ts, npx tsx bench/fleet_bench.ts)
import process from "node:process";
import { Guard, Limit } from "../mod.ts";
import { latest, type Member, sleep, startFleet, stopAll } from "../tests/runtime/fleet_support.ts";

const MEASURE_MS = 10_000;
const PERIOD_MS = 200;

const members: Member[] = await startFleet([0, 0, 0, 0], { limit: 1_000_000, periodMs: PERIOD_MS });
try {
  const guard = await Guard.builder().bind("127.0.0.1:0").seeds([members[0].address]).limit(
    1_000_000,
  )
    .protocolPeriodMs(PERIOD_MS).spawn();
  const standalone = await Guard.builder().defaultLimit(Limit.perSecond(1_000_000)).spawn();
  while (guard.clusterSize() < 5) await sleep(100);
  // Make the key hot: enough traffic to pass its cold share.
  for (let i = 0; i < 300_000; i++) guard.check("api:tenant-42");
  await sleep(1_000);

  const first = members.map((m) => latest(m)!);
  const sentBefore = guard.traffic()!;
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
  const seconds = (performance.now() - t0) / 1000;
  const sent = guard.traffic()!;
  const last = members.map((m) => latest(m)!);
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const memberSeconds = (last[0].atMs - first[0].atMs) / 1000;
  const perNode = last.map((r, i) => ({
    datagrams: (r.traffic.datagramsSent - first[i].traffic.datagramsSent) / memberSeconds,
    bytes: (r.traffic.bytesSent - first[i].traffic.bytesSent) / memberSeconds,
    cpuMs: (r.cpuMicros - first[i].cpuMicros) / 1000 / memberSeconds,
  }));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const runtime = globalThis as unknown as {
    Deno?: { version: { deno: string } };
    Bun?: { version: string };
  };
  const name = runtime.Deno
    ? `Deno ${runtime.Deno.version.deno}`
    : runtime.Bun
    ? `Bun ${runtime.Bun.version}`
    : `Node ${process.versions.node}`;
  const hot = median(fleetNs);
  const alone = median(aloneNs);
  console.log(
    `A five-instance fleet on loopback, ${name}, protocol period ${PERIOD_MS} ms, ${
      seconds.toFixed(0)
    } s:\n`,
  );
  console.log("| figure | value |");
  console.log("| --- | ---: |");
  console.log(`| check(), hot key, gossip running | ${hot.toFixed(1)} ns |`);
  console.log(`| check(), standalone guard, same process | ${alone.toFixed(1)} ns |`);
  console.log(
    `| cost of gossip running on check() | ${(((hot - alone) / alone) * 100).toFixed(1)}% |`,
  );
  console.log(
    `| gossip datagrams sent per instance per second (idle members) | ${
      mean(perNode.map((p) => p.datagrams)).toFixed(1)
    } |`,
  );
  console.log(
    `| per protocol period | ${
      (mean(perNode.map((p) => p.datagrams)) * PERIOD_MS / 1000).toFixed(2)
    } |`,
  );
  console.log(
    `| gossip bytes sent per instance per second | ${
      mean(perNode.map((p) => p.bytes)).toFixed(0)
    } |`,
  );
  console.log(
    `| datagrams sent per second by the busy instance (a hot key) | ${
      ((sent.datagramsSent - sentBefore.datagramsSent) / seconds).toFixed(1)
    } |`,
  );
  console.log(
    `| bytes sent per second by the busy instance | ${
      ((sent.bytesSent - sentBefore.bytesSent) / seconds).toFixed(0)
    } |`,
  );
  console.log(
    `| CPU of an idle member process, ms per second | ${
      mean(perNode.map((p) => p.cpuMs)).toFixed(2)
    } |`,
  );
  await guard.leave();
  await standalone.leave();
} finally {
  stopAll(members);
}
process.exit(0);
