import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Enforcer } from "../../src/core/enforcer.ts";
import { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { Fleet } from "../../src/sim/faces/fleet.ts";

const KEYS_PER_MS = 20; // 20,000 distinct keys a second
const WINDOW_MS = 250;

describe("a new member and new keys", () => {
  it("past its hold, admits 20,000 distinct keys a second like a member up for minutes", () => {
    const fleet = new Fleet({ seed: 3, size: 2, limit: Limit.perSecond(100) });
    fleet.runUntil(60_000);
    const fresh = fleet.add();
    let next = 0;
    let heldUntilMs: number | undefined;
    const windows: { atMs: number; fresh: number; settled: number }[] = [];
    let current = { atMs: fleet.nowMs, fresh: 0, settled: 0 };
    for (let t = fleet.nowMs; t < 64_000; t++) {
      fleet.runUntil(t + 1);
      for (let i = 0; i < KEYS_PER_MS; i++) {
        if (fleet.check(fresh, `new:${next++}`)) current.fresh++;
        if (fleet.check(0, `new:${next++}`)) current.settled++;
      }
      if (heldUntilMs === undefined && !fleet.stats(fresh)!.held) heldUntilMs = fleet.nowMs;
      if (fleet.nowMs - current.atMs === WINDOW_MS) {
        windows.push(current);
        current = { atMs: fleet.nowMs, fresh: 0, settled: 0 };
      }
    }
    assert.ok(heldUntilMs !== undefined && heldUntilMs < 62_000, `held until ${heldUntilMs}`);
    // The windows that start after the hold is over.
    const past = windows.filter((w) => w.atMs >= heldUntilMs!);
    assert.ok(past.length >= 6, `${past.length} windows past the hold`);
    const figures = windows.map((w) => `${w.fresh}/${w.settled}`).join(" ");
    for (const w of past) {
      // The settled member admits (nearly) every new key; so must the new one.
      assert.ok(w.settled >= 0.99 * KEYS_PER_MS * WINDOW_MS, `settled member: ${figures}`);
      assert.ok(w.fresh >= 0.99 * w.settled, `new/settled admitted per window: ${figures}`);
    }
  });
});

describe("keys made lean while held", () => {
  const make = () => {
    const book = new LimitBook(Limit.perSecond(10).burst(10), { maxClasses: 4, maxKeyLimits: 4 });
    return new Enforcer(book, { capacity: 64, overflowScale: 0.5 });
  };

  it("start with one request of their burst, and get the rest back once the hold is over", () => {
    const e = make();
    e.setStartLean(true, 0);
    assert.equal(e.check("", "k", 1, 0).allowed, true);
    e.setStartLean(false, 1);
    let admitted = 0;
    for (let i = 0; i < 20; i++) if (e.check("", "k", 1, 1).allowed) admitted++;
    assert.equal(admitted, 9); // the burst of 10, less the one spent while held
  });

  it("that were denied while held keep their debt: no fresh burst when the hold ends", () => {
    const e = make();
    e.setStartLean(true, 0);
    assert.equal(e.check("", "k", 1, 0).allowed, true);
    assert.equal(e.check("", "k", 1, 0).allowed, false);
    e.setStartLean(false, 1);
    assert.equal(e.check("", "k", 1, 1).allowed, false);
  });

  it("free their places once down to the one request a fresh lean key gets", () => {
    const e = make(); // 64 places
    e.setStartLean(true, 0);
    for (let i = 0; i < 64; i++) e.check("", `a${i}`, 1, 0);
    // 100 ms later each has its one request back, and holds nothing a new key would not.
    let admitted = 0;
    for (let i = 0; i < 64; i++) if (e.check("", `b${i}`, 1, 100).allowed) admitted++;
    assert.equal(e.counters.overflowed, 0);
    assert.equal(admitted, 64);
  });
});
