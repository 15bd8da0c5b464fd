// Three sidecar processes on 127.0.0.1 with --shared-burst, on the runtime
// running the test: a member's burst is its part of the fleet's, not the
// whole. Real sockets and processes, bounded in time; what they start, they stop.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { eventually, postJson, type Sidecar, startSidecar } from "../http/support.ts";

const LIMIT = ["--limit", "300/s", "--burst", "60"];

async function stats(s: Sidecar): Promise<Record<string, unknown>> {
  return await (await fetch(`${s.url}/v1/stats`)).json() as Record<string, unknown>;
}

/** What a member's next check of `key` would leave: its burst less one, for a key owing nothing. */
async function remaining(s: Sidecar, key: string): Promise<number> {
  const d = await (await fetch(`${s.url}/v1/peek?key=${key}`)).json() as { remaining: number };
  return d.remaining;
}

async function startFleet(flags: readonly string[]): Promise<Sidecar[]> {
  const fleet: Sidecar[] = [];
  try {
    fleet.push(await startSidecar(flags, { fleet: true }));
    for (let i = 1; i < 3; i++) {
      fleet.push(await startSidecar([...flags, "--seeds", fleet[0].gossip], { fleet: true }));
    }
    await eventually(
      async () => {
        const all = await Promise.all(fleet.map(stats));
        return all.every((s) => s.countedSize === 3 && !s.joining && !s.learning);
      },
      "three members, none held",
      30_000,
    );
    return fleet;
  } catch (e) {
    for (const s of fleet) s.process.kill();
    throw e;
  }
}

describe("sharedBurst on real processes", { timeout: 120_000 }, () => {
  it("a member's burst is its share's part of the fleet's: cold, and hot under even load", async () => {
    const fleet = await startFleet([...LIMIT, "--shared-burst"]);
    try {
      // A cold key runs at α·R/N = R/6 on each of three: a sixth of the burst, 10.
      assert.equal(await remaining(fleet[0], "cold"), 9);
      // Even load on all three (cost 10 every 50 ms: 200/s each, 600/s in all)
      // makes the key hot with a third of R on each, and so a third of the burst.
      const until = Date.now() + 4_000;
      while (Date.now() < until) {
        await Promise.all(
          fleet.map((s) => postJson(`${s.url}/v1/check`, { key: "hot", cost: 10 })),
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const hot = await stats(fleet[0]);
      assert.ok((hot.hotKeys as number) >= 1, `hot keys: ${hot.hotKeys}`);
      // Time to pay its debt back at about R/3 = 100/s, before its share moves.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const left = await Promise.all(fleet.map((s) => remaining(s, "hot")));
      // About 20 - 1 each; the whole burst would leave 59.
      for (const r of left) assert.ok(r >= 9 && r <= 30, `remaining after the load: ${left}`);
    } finally {
      for (const s of fleet) s.process.kill();
    }
  });

  it("with --no-shared-burst, every member keeps the whole burst", async () => {
    const fleet = await startFleet([...LIMIT, "--no-shared-burst"]);
    try {
      assert.equal(await remaining(fleet[0], "cold"), 59);
    } finally {
      for (const s of fleet) s.process.kill();
    }
  });

  it("unset, three bursts of 60 outgrow the cold fraction's 150 of headroom, so it is shared", async () => {
    const fleet = await startFleet(LIMIT);
    try {
      assert.equal(await remaining(fleet[0], "cold"), 9);
    } finally {
      for (const s of fleet) s.process.kill();
    }
  });
});
