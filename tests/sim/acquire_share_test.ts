import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet, KEY } from "../../src/sim/faces/fleet.ts";
import { Limit } from "../../src/core/limit.ts";

const LIMIT = Limit.perSecond(100).burst(10);
const WAITERS = 1_000;
/** Node 1's plain traffic: half the limit, what node 0 should end up with too. */
const PLAIN_PER_SEC = 50;

/** Two nodes: node 1 offered plain checks, node 0 held by `load` from 5 s on. */
function twoNodes(load: (fleet: Fleet) => { admitted: () => number }) {
  const fleet = new Fleet({ seed: 11, size: 2, limit: LIMIT });
  fleet.runUntil(5_000);
  fleet.setDemand(1, PLAIN_PER_SEC);
  const waiting = load(fleet);
  fleet.runUntil(60_000);
  fleet.take(1);
  const before = waiting.admitted();
  fleet.runUntil(90_000);
  return {
    share: [fleet.share(0, KEY), fleet.share(1, KEY)],
    admittedPerSec: [(waiting.admitted() - before) / 30, fleet.take(1).admitted / 30],
  };
}

describe("callers waiting in acquire, in the fleet", () => {
  it("claim no more share than an instance admitting as much with no one waiting", () => {
    let admitted = 0, denied = 0;
    const waitOnce = (fleet: Fleet) => {
      // Each caller, once admitted, comes straight back: 1,000 always wait.
      const settle = (d: { allowed: boolean }) => {
        if (!d.allowed) return void denied++;
        admitted++;
        const now = fleet.acquire(0, KEY, { maxWaitMs: 120_000, settle });
        if (now !== undefined) settle(now);
      };
      for (let i = 0; i < WAITERS; i++) {
        const now = fleet.acquire(0, KEY, { maxWaitMs: 120_000, settle });
        if (now !== undefined) settle(now);
      }
      return { admitted: () => admitted };
    };
    const { share, admittedPerSec } = twoNodes(waitOnce);
    assert.equal(denied, 0, "no wait timed out");
    assert(
      share[0] <= share[1] * 1.05,
      `node 0 (1,000 waiting) holds ${share[0].toFixed(1)}/s, node 1 (none) ${
        share[1].toFixed(1)
      }/s`,
    );
    assert(
      Math.abs(admittedPerSec[0] - admittedPerSec[1]) <= 0.1 * PLAIN_PER_SEC,
      `admitted a second: ${admittedPerSec.map((x) => x.toFixed(1))}`,
    );
  });

  it("as acquire was: callers checking again at each wake-up claim most of the share", () => {
    // The measure above, against 1,000 callers that each check every 100 ms
    // until admitted (as each waiter re-checked after its wait): node 0's
    // demand reads as 10,000 a second, and its share follows.
    const fleet = new Fleet({ seed: 11, size: 2, limit: LIMIT });
    fleet.runUntil(5_000);
    fleet.setDemand(1, PLAIN_PER_SEC);
    for (let t = 5_000; t <= 90_000; t += 100) {
      fleet.runUntil(t);
      for (let i = 0; i < WAITERS; i++) fleet.check(0, KEY);
    }
    const share = [fleet.share(0, KEY), fleet.share(1, KEY)];
    assert(
      share[0] > 2 * share[1],
      `node 0 ${share[0].toFixed(1)}/s, node 1 ${share[1].toFixed(1)}/s`,
    );
  });
});
