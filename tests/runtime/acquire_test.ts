import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { MAX_WAITERS } from "../../src/runtime/acquire.ts";

// On the real clock, kept short: 40 admissions at 1,000 a second. The same
// line on virtual time, at the issue's 10 a second, is in
// tests/core/wait_line_test.ts.
describe("acquire on the guard", () => {
  it("serves a hot key's waiters in arrival order and counts each once", async () => {
    const guard = await Guard.builder().limit(1_000).burst(1).spawn();
    assert(guard.check("hot").allowed);
    const order: number[] = [];
    const waits = Array.from(
      { length: 40 },
      (_, i) => guard.acquire("hot", { maxWaitMs: 5_000 }).then((d) => (order.push(i), d)),
    );
    const decisions = await Promise.all(waits);
    assert(decisions.every((d) => d.allowed));
    assert.deepEqual(order, Array.from({ length: 40 }, (_, i) => i));
    const stats = guard.stats();
    assert.equal(stats.admitted, 41);
    assert.equal(stats.denied, 0, "a wake-up is not a new request");
    const key = guard.keyStats("hot")!;
    // 41 requests in a life under ten seconds: the last ten seconds' rate.
    assert(Math.abs(key.requestsPerSec - 4.1) < 1e-9, `requestsPerSec ${key.requestsPerSec}`);
    assert.equal(key.deniedPerSec, 0);
    await guard.leave();
  });

  it("counts a wait that ends in an abort or a timeout as one denied request", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perMinute(60).burst(1)).spawn();
    guard.check("k");
    const controller = new AbortController();
    const aborted = guard.acquire("k", { signal: controller.signal, maxWaitMs: 60_000 });
    // Behind it, a wait that cannot fit in its maxWaitMs: answered at once.
    const late = await guard.acquire("k", { maxWaitMs: 1_500 });
    assert.equal(late.allowed, false);
    assert(late.retryAfterMs > 1_500, `retryAfterMs ${late.retryAfterMs}`);
    controller.abort(new Error("gone"));
    await assert.rejects(aborted, /gone/);
    assert.deepEqual([guard.stats().admitted, guard.stats().denied], [1, 2]);
    await guard.leave();
  });

  it("holds at most MAX_WAITERS, and lets them all go at once, each counted once", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perMinute(1).burst(1)).spawn();
    guard.check("k");
    const controller = new AbortController();
    const options = { signal: controller.signal, maxWaitMs: 2 ** 31 - 1 };
    const waits = Array.from({ length: MAX_WAITERS }, () => guard.acquire("k", options));
    const beyond = await guard.acquire("k", options);
    assert.equal(beyond.allowed, false, "one more is answered at once");
    assert.equal(guard.stats().denied, 1);
    controller.abort(new Error("shutting down"));
    const ends = await Promise.allSettled(waits);
    assert(ends.every((e) => e.status === "rejected"));
    assert.deepEqual([guard.stats().admitted, guard.stats().denied], [1, MAX_WAITERS + 1]);
    await guard.leave();
  });
});
