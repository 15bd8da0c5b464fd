import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../src/core/limit.ts";
import { type Waiter, WaitLine } from "../../src/core/wait_line.ts";
import type { Decision } from "../../src/core/decision.ts";
import { rig } from "./support.ts";

/** One key's line over a standalone enforcer, on virtual time. */
function lineOf(limit: Limit, capacity?: number) {
  const { enforcer } = rig(limit, { capacity });
  const line = new WaitLine(enforcer.lineGate("", "k"));
  const answers: { id: number; atMs: number; decision: Decision }[] = [];
  const time = { nowMs: 0, wakes: 0 };
  const waiter = (id: number, deadlineMs: number, cost = 1): Waiter => ({
    cost,
    deadlineMs,
    settle: (decision) => answers.push({ id, atMs: time.nowMs, decision }),
  });
  /** Runs the line's one timer until `untilMs`, as the runtime does. */
  const runUntil = (untilMs: number) => {
    for (let at = line.pollTimeout(); at !== undefined && at <= untilMs; at = line.pollTimeout()) {
      time.nowMs = at;
      time.wakes++;
      line.handleTimeout(at);
    }
    time.nowMs = untilMs;
  };
  const counts = () => {
    const { admitted, denied } = enforcer.counters;
    return { admitted, denied, requests: enforcer.table.get("", "k")?.requests };
  };
  return { enforcer, line, answers, time, waiter, runUntil, counts };
}

describe("one key's wait line", () => {
  it("admits 40 waiters at 10 a second in arrival order, one check and one wake each", () => {
    const t = lineOf(Limit.perSecond(10).burst(1));
    assert(t.enforcer.check("", "k", 1, 0).allowed);
    for (let i = 0; i < 40; i++) assert.equal(t.line.join(t.waiter(i, 10_000), 0), undefined);
    t.runUntil(60_000);
    assert.deepEqual(t.answers.map((a) => a.id), Array.from({ length: 40 }, (_, i) => i));
    assert(t.answers.every((a) => a.decision.allowed));
    assert.deepEqual(
      t.answers.map((a) => a.atMs),
      Array.from({ length: 40 }, (_, i) => 100 * (i + 1)),
    );
    assert.deepEqual(t.counts(), { admitted: 41, denied: 0, requests: 41 });
    assert.equal(t.time.wakes, 40, "one wake of the line's timer per admission");
    assert.equal(t.line.size, 0);
  });

  it("keeps count through a late timer: the line slips, and answers each by its deadline", () => {
    const t = lineOf(Limit.perSecond(1_000).burst(1));
    t.enforcer.check("", "k", 1, 0);
    // 100 waiters, 1 ms apart if the timer were punctual; it fires 0.5 ms
    // late each time, so it admits one each 1.5 ms, and those after the
    // 80th cannot make their 120 ms.
    for (let i = 0; i < 100; i++) t.line.join(t.waiter(i, 120), 0);
    for (let at = t.line.pollTimeout(); at !== undefined; at = t.line.pollTimeout()) {
      t.time.nowMs = Math.max(t.time.nowMs, at + 0.5);
      t.line.handleTimeout(t.time.nowMs);
    }
    const admitted = t.answers.filter((a) => a.decision.allowed);
    assert.equal(t.answers.length, 100);
    assert.equal(admitted.length, 80, "one each 1.5 ms, up to 120 ms");
    assert.deepEqual(admitted.map((a) => a.id), admitted.map((_, i) => i), "in order");
    assert(
      t.answers.every((a) => a.atMs <= 120 + 0.5),
      "none answered after its deadline and a late timer",
    );
    const denied = 100 - admitted.length;
    assert.deepEqual(t.counts(), { admitted: 1 + admitted.length, denied, requests: 101 });
  });

  it("answers at once a waiter the line ahead keeps past its deadline, counted once", () => {
    const t = lineOf(Limit.perSecond(10).burst(1));
    t.enforcer.check("", "k", 1, 0);
    t.line.join(t.waiter(0, 10_000), 0); // admitted at 100
    const late = t.line.join(t.waiter(1, 150), 0); // would be at 200
    assert.equal(late?.allowed, false);
    assert.equal(late?.retryAfterMs, 200, "the wait behind the line, not the key's alone");
    const never = t.line.join(t.waiter(2, 10_000, 2), 0);
    assert.equal(never?.retryAfterMs, Infinity, "a cost above the burst never fits");
    // Requests by cost, as a check counts them: 1 + 1 + 2.
    assert.deepEqual(t.counts(), { admitted: 1, denied: 2, requests: 4 });
  });

  it("reckons the line again when other checks take its room, and times out once", () => {
    const t = lineOf(Limit.perSecond(10).burst(1));
    t.enforcer.check("", "k", 1, 0);
    t.line.join(t.waiter(0, 150), 0); // at 100, if all goes well
    t.line.join(t.waiter(1, 250), 0); // at 200
    assert(t.enforcer.check("", "k", 1, 100).allowed, "a plain check before the line's timer");
    t.runUntil(1_000);
    assert.deepEqual(
      t.answers.map((a) => [a.id, a.atMs, a.decision.allowed]),
      [[0, 100, false], [1, 200, true]],
    );
    assert.deepEqual(t.counts(), { admitted: 3, denied: 1, requests: 4 });
  });

  it("counts a waiter that leaves once, and moves those behind it up", () => {
    const t = lineOf(Limit.perSecond(10).burst(1));
    t.enforcer.check("", "k", 1, 0);
    const first = t.waiter(0, 10_000);
    t.line.join(first, 0);
    t.line.join(t.waiter(1, 10_000), 0);
    assert.equal(t.line.pollTimeout(), 100);
    t.time.nowMs = 50;
    assert.equal(t.line.leave(first, 50), true);
    assert.equal(t.line.leave(first, 50), false, "already gone: not counted again");
    assert.equal(t.line.pollTimeout(), 50, "due now, to move those behind it up");
    t.runUntil(60);
    assert.equal(t.line.pollTimeout(), 100, "the next one is the head");
    t.runUntil(1_000);
    assert.deepEqual(t.answers.map((a) => [a.id, a.atMs, a.decision.allowed]), [[1, 100, true]]);
    assert.deepEqual(t.counts(), { admitted: 2, denied: 1, requests: 3 });
  });

  it("keeps a costly head at the front: those behind it wait their turn", () => {
    const t = lineOf(Limit.perSecond(10).burst(3));
    for (let i = 0; i < 3; i++) t.enforcer.check("", "k", 1, 0);
    t.line.join(t.waiter(0, 10_000, 3), 0); // needs the whole burst: at 300
    t.line.join(t.waiter(1, 10_000), 0); // fits at 100 alone, but waits behind: at 400
    t.runUntil(1_000);
    assert.deepEqual(t.answers.map((a) => [a.id, a.atMs]), [[0, 300], [1, 400]]);
    assert.deepEqual(t.counts(), { admitted: 5, denied: 0, requests: 3 + 3 + 1 });
  });

  it("waits on a new key as its first check finds it: lean while the node is held", () => {
    const t = lineOf(Limit.perSecond(10).burst(3));
    t.enforcer.setStartLean(true, 0); // a new key starts with one request of its burst
    assert.equal(t.line.join(t.waiter(0, 10_000, 2), 0), undefined, "waits, not denied");
    t.runUntil(1_000);
    assert.deepEqual(t.answers.map((a) => [a.id, a.atMs, a.decision.allowed]), [[0, 100, true]]);
    assert.deepEqual(t.counts(), { admitted: 1, denied: 0, requests: 2 });
  });

  it("waits on the overflow allowance for a key with no place, counted by its checks alone", () => {
    const t = lineOf(Limit.perSecond(10).burst(1), 1);
    assert(t.enforcer.check("", "other", 1, 0).allowed, "takes the table's one place");
    assert(t.enforcer.check("", "k", 1, 0).allowed, "the overflow allowance, at half the rate");
    assert.equal(t.line.join(t.waiter(0, 10_000), 0), undefined);
    t.runUntil(1_000);
    assert.deepEqual(t.answers.map((a) => [a.atMs, a.decision.allowed]), [[200, true]]);
    // The check at 0 alone: the line's looks count nothing, and by 200 ms
    // "other" has paid back all it owed, so the admission took its place.
    assert.equal(t.enforcer.counters.overflowed, 1);
  });

  it("waits out a block held outside the key table, then the burst's first request", () => {
    const t = lineOf(Limit.perSecond(10).burst(1));
    t.enforcer.check("", "k", 1, 0);
    assert(t.enforcer.block("", "k", 300, 0));
    const tooSoon = t.line.join(t.waiter(0, 350), 0);
    assert.equal(tooSoon?.retryAfterMs, 400, "blocked until 300, then one interval");
    assert.equal(t.line.join(t.waiter(1, 10_000), 0), undefined);
    t.runUntil(1_000);
    assert.deepEqual(t.answers.map((a) => [a.id, a.atMs, a.decision.allowed]), [[1, 400, true]]);
    assert.deepEqual(t.counts(), { admitted: 2, denied: 1, requests: 3 });
  });

  it("admits at once in a dry run", () => {
    const t = lineOf(Limit.perSecond(10).burst(1));
    t.enforcer.dryRun = true;
    t.enforcer.check("", "k", 1, 0);
    assert.equal(t.line.join(t.waiter(0, 10_000), 0)?.allowed, true);
    assert.equal(t.line.size, 0);
  });
});
