import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";

/** A standalone guard on a clock the test moves. */
async function onClock(limit: Limit, classes: Record<string, Limit> = {}) {
  const time = { nowMs: 1_000 };
  let b = Guard.builder().defaultLimit(limit).clock(() => time.nowMs);
  for (const [name, l] of Object.entries(classes)) b = b.class(name, l);
  return { guard: await b.spawn(), time };
}

describe("operations on one key", () => {
  it("refund gives back what a check took, never more", async () => {
    const { guard } = await onClock(Limit.perMinute(3).burst(3));
    for (let i = 0; i < 3; i++) assert(guard.check("k").allowed);
    assert.equal(guard.check("k").allowed, false);
    assert.equal(guard.refund("k", { cost: 2 }), true);
    // peek says what is left after one more: two given back, one of them taken.
    assert.equal(guard.peek("k").remaining, 1);
    // A refund of more than is owed stops at a full burst: the burst, not one more.
    assert.equal(guard.refund("k", { cost: 100 }), true);
    assert.equal(guard.peek("k").remaining, 2);
    assert.equal(guard.refund("k"), false, "nothing owed: nothing to give back");
    assert.equal(guard.refund("never-seen"), false);
    for (let i = 0; i < 3; i++) assert(guard.check("k").allowed);
    assert.equal(guard.check("k").allowed, false, "still the burst of 3 after all refunds");
    assert.throws(() => guard.refund("k", { cost: 0 }), RangeError);
    assert.throws(() => guard.refund(""), TypeError);
  });

  it("reset forgets a key's debt, in its class only", async () => {
    const { guard } = await onClock(Limit.perHour(1).burst(1), { pro: Limit.perHour(1).burst(1) });
    guard.check("k");
    guard.check("k", { class: "pro" });
    assert.equal(guard.reset("k"), true);
    assert(guard.check("k").allowed);
    assert.equal(guard.check("k", { class: "pro" }).allowed, false);
    assert.equal(guard.reset("nobody"), false);
  });

  it("block denies for its duration, is shown in keyStats, then the burst comes back at the rate", async () => {
    const { guard, time } = await onClock(Limit.perSecond(10).burst(5));
    assert.equal(guard.block("ip:1", 60_000), true);
    const denied = guard.check("ip:1");
    assert.equal(denied.allowed, false);
    // The block's wait plus one request's worth at 10/s.
    assert.equal(denied.retryAfterMs, 60_100);
    assert.equal(guard.keyStats("ip:1")?.blockedForMs, 60_000);
    assert.equal(guard.refund("ip:1"), false, "a refund does not lift a block");
    time.nowMs += 59_999;
    assert.equal(guard.check("ip:1").allowed, false);
    time.nowMs += 101;
    assert.equal(guard.keyStats("ip:1")?.blockedForMs, 0);
    assert(guard.check("ip:1").allowed, "one request's worth back 100 ms after the block");
    assert.equal(guard.check("ip:1").allowed, false, "not the whole burst at once");
    // A shorter block leaves a longer one; reset lifts it.
    guard.block("ip:1", 10_000);
    guard.block("ip:1", 1_000);
    assert.equal(guard.keyStats("ip:1")?.blockedForMs, 10_000);
    guard.reset("ip:1");
    assert.equal(guard.keyStats("ip:1")?.blockedForMs, 0);
    assert(guard.check("ip:1").allowed);
    assert.throws(
      () => guard.block("ip:1", 0),
      (e) => e instanceof RangeError && /ms/.test(e.message),
    );
    assert.throws(() => guard.block("ip:1", Infinity), RangeError);
  });

  it("a block outlives a change of limit", async () => {
    const { guard } = await onClock(Limit.perSecond(10).burst(5));
    guard.block("k", 5_000);
    guard.setLimit(Limit.perSecond(100).burst(50));
    assert.equal(guard.check("k").allowed, false);
    assert.equal(guard.keyStats("k")?.blockedForMs, 5_000);
  });
});

describe("acquire", () => {
  it("waits until a check is admitted, on the real clock", async () => {
    const guard = await Guard.builder().limit(1_000).burst(1).spawn();
    guard.check("k");
    const d = await guard.acquire("k", { maxWaitMs: 5_000 });
    assert.equal(d.allowed, true);
  });

  it("answers at once with the denial when the wait would pass maxWaitMs", async () => {
    const { guard } = await onClock(Limit.perHour(1).burst(1));
    guard.check("k");
    const d = await guard.acquire("k", { maxWaitMs: 1_000 });
    assert.equal(d.allowed, false);
    assert(d.retryAfterMs > 1_000);
    const never = await guard.acquire("k", { cost: 2 });
    assert.equal(never.retryAfterMs, Infinity);
    await assert.rejects(() => guard.acquire("k", { maxWaitMs: -1 }), RangeError);
  });

  it("is cancelled by its signal", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perMinute(1).burst(1)).spawn();
    guard.check("k");
    const controller = new AbortController();
    const waiting = guard.acquire("k", { signal: controller.signal, maxWaitMs: 120_000 });
    controller.abort(new Error("client went away"));
    await assert.rejects(waiting, /client went away/);
    const aborted = AbortSignal.abort(new Error("already"));
    await assert.rejects(guard.acquire("k", { signal: aborted }), /already/);
  });
});
