import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  settledRate,
  sleep,
  standbyMember,
  startFleet,
  stopAll,
  waitForSize,
} from "./fleet_support.ts";

const LIMIT = 300;

describe("a member killed and started again at once on its port", { timeout: 120_000 }, () => {
  it("with another load: its new life supersedes the old, and the fleet stays within the limit", async () => {
    // 200 + 200 + 10 wanted; the last comes back wanting 400. Peers that
    // kept the old life's 10/s would admit about 1.45 times the limit.
    const fleet = await startFleet([200, 200, 10], { limit: LIMIT });
    let standby: Awaited<ReturnType<typeof standbyMember>> | undefined;
    try {
      await waitForSize(fleet, 3);
      const old = fleet[2];
      // Loaded beforehand, so that the new process binds the moment the old one is gone.
      standby = await standbyMember({
        bind: old.address,
        seeds: fleet[0].address,
        rate: 400,
        limit: LIMIT,
      });
      // The old life runs long enough for its rounds to lead a new one's by dozens.
      await sleep(5_000);
      old.process.child.kill("SIGKILL");
      await old.process.exited();
      fleet[2] = await standby.start();
      standby = undefined;
      const rate = await settledRate(fleet, 3_000, 4_000);
      assert.ok(
        Math.abs(rate - LIMIT) <= 0.1 * LIMIT,
        `after the restart: ${rate.toFixed(0)}/s against ${LIMIT}`,
      );
    } finally {
      stopAll(fleet);
      standby?.process.kill();
    }
  });
});
