// Real processes: a member that has not reached a peer is held at the floor.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { start } from "../support/process.ts";
import { startMember, stopAll } from "./fleet_support.ts";
import { startSidecar } from "../http/support.ts";

const R = 100; // the key's limit, per second; burst 10
const BETA = 0.05;

/**
 * The most a member held at the floor R·β/N admits of one key over
 * `elapsedMs` from its start: the one request a lean start leaves of the
 * burst, then the floor's rate (N = 1 while joining, so at most R·β).
 */
const floorBound = (elapsedMs: number) => 1 + Math.ceil((R * BETA * elapsedMs) / 1_000);

interface Outcome {
  checks: number;
  admitted: number;
  first100: number;
  elapsedMs: number;
  joining: boolean;
  clusterSize: number;
}

/** A UDP port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

async function newcomer(seeds: string, forMs: number): Promise<Outcome> {
  const p = start("tests/support/joining_member.ts", [
    "--seeds",
    seeds,
    "--limit",
    String(R),
    "--for-ms",
    String(forMs),
  ]);
  // The child is quiet until it is done; a timer keeps the event loop of
  // this test waiting for it (Deno would not wait on the child alone).
  const keepAlive = setInterval(() => {}, 50);
  try {
    const [line] = await p.waitFor(/\{"checks".*\}/, 30_000);
    return JSON.parse(line) as Outcome;
  } finally {
    clearInterval(keepAlive);
    p.kill();
  }
}

describe("a member that has not reached a peer, on a real process", () => {
  it("whose only seed is a closed port admits at most the floor, and says it is joining", async () => {
    const o = await newcomer(`127.0.0.1:${await closedPort()}`, 1_500);
    const bound = floorBound(o.elapsedMs);
    assert.ok(o.checks > 20 * bound, `offered far more than the floor: ${JSON.stringify(o)}`);
    assert.ok(o.admitted <= bound, `admitted ${o.admitted} > ${bound}: ${JSON.stringify(o)}`);
    assert.deepEqual([o.joining, o.clusterSize], [true, 1]);
  });

  it("joining a live fleet: held in its first 100 ms", async () => {
    const [first] = [await startMember({ rate: 0, limit: R })];
    try {
      const o = await newcomer(first.address, 400);
      // Joining (N = 1), then learning (N = 2): at most the floor R·β.
      assert.ok(o.first100 <= floorBound(100), `first 100 ms: ${JSON.stringify(o)}`);
      assert.ok(o.admitted <= floorBound(o.elapsedMs), `in all: ${JSON.stringify(o)}`);
      assert.deepEqual([o.joining, o.clusterSize], [false, 2], "it did join");
    } finally {
      stopAll([first]);
    }
  });

  it("the sidecar with a closed seed: at most the floor, 503 joining, stats say joining", async () => {
    const s = await startSidecar(
      ["--limit", `${R}/s`, "--burst", "10", "--seeds", `127.0.0.1:${await closedPort()}`],
      { fleet: true },
    );
    try {
      // Offer well above the floor however slow this machine is: four checks
      // in flight at once, for a second and then until three times the bound
      // have been asked (the bound grows with time too), or 20 s have passed.
      const startMs = performance.now();
      let admitted = 0, checks = 0;
      const bound = () => floorBound(performance.now() - startMs + 1_000);
      const offering = () => {
        const elapsedMs = performance.now() - startMs;
        return (elapsedMs < 1_000 || checks <= 3 * bound()) && elapsedMs < 20_000;
      };
      const worker = async () => {
        while (offering()) {
          const res = await fetch(`${s.url}/v1/check`, {
            method: "POST",
            body: JSON.stringify({ key: "tenant:42" }),
          });
          if ((await res.json()).allowed) admitted++;
          checks++;
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      // The sidecar was up before the first check: its whole life so far counts.
      const most = bound();
      assert.ok(checks > 2 * most, `${checks} checks`);
      assert.ok(admitted <= most, `admitted ${admitted} > ${most} of ${checks}`);
      const ready = await fetch(`${s.url}/readyz`);
      // 503, with why it is joining (the stats say the same, in joinBlocked).
      const text = await ready.text();
      assert.equal(ready.status, 503);
      assert.match(text, /^joining: no member answered at 1 seed address/);
      const stats = await (await fetch(`${s.url}/v1/stats`)).json();
      assert.equal(stats.joining, true);
      assert.equal(`${stats.joinBlocked}\n`, text);
    } finally {
      s.process.kill();
    }
  });
});
