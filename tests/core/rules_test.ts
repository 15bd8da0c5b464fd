import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KeyLimit, Limit, RateguardError } from "../../mod.ts";
import { offer, rig } from "./support.ts";

describe("classes", () => {
  it("a key is checked in its class; the same key in two classes is two keys", () => {
    const r = rig(Limit.perSecond(10).burst(1));
    r.book.setClass("pro", Limit.perSecond(100).burst(5));
    assert.equal(offer(r, "k", { perSec: 1_000, seconds: 1, className: "pro" }), 100 + 4);
    assert.equal(offer(r, "k", { perSec: 1_000, seconds: 1 }), 10);
  });

  it("an unknown class takes the default limit and is counted", () => {
    const r = rig(Limit.perSecond(10).burst(1));
    assert.equal(offer(r, "k", { perSec: 1_000, seconds: 1, className: "typo" }), 10);
    assert.equal(r.enforcer.counters.unknownClass, 1_000);
  });

  it("a changed limit applies to known keys with no fresh burst", () => {
    const r = rig(Limit.perSecond(10).burst(10));
    r.book.setClass("c", Limit.perSecond(10).burst(10));
    for (let i = 0; i < 10; i++) assert.ok(r.enforcer.check("c", "k", 1, 0).allowed);
    r.book.setClass("c", Limit.perSecond(1_000).burst(10));
    // The key's debt (one second) stays: no fresh burst under the new limit.
    assert.equal(r.enforcer.check("c", "k", 1, 0).allowed, false);
    // ... and once it is paid, the new rate holds.
    assert.equal(
      offer(r, "k", { perSec: 10_000, seconds: 1, startMs: 1_000, className: "c" }),
      1_000 + 9,
    );
  });

  it("removing a class sends its keys to the default limit", () => {
    const r = rig(Limit.perSecond(5).burst(1));
    r.book.setClass("c", Limit.perSecond(100).burst(1));
    assert.equal(r.book.removeClass("c"), true);
    assert.equal(r.book.removeClass("c"), false);
    assert.equal(offer(r, "k", { perSec: 1_000, seconds: 1, className: "c" }), 5);
    assert.equal(r.enforcer.counters.unknownClass, 1_000);
  });

  it("setClasses replaces all, or none if one is refused", () => {
    const r = rig(Limit.perSecond(5), { maxClasses: 2 });
    r.book.setClasses([["a", Limit.perSecond(1)], ["b", Limit.perSecond(2)]]);
    assert.deepEqual(r.book.classes().map(([n]) => n), ["a", "b"]);
    assert.throws(
      () =>
        r.book.setClasses([["x", Limit.perSecond(1)], ["y", Limit.perSecond(1)], [
          "z",
          Limit.perSecond(1),
        ]]),
      (e) => e instanceof RateguardError && e.code === "TooManyClasses",
    );
    assert.deepEqual(r.book.classes().map(([n]) => n), ["a", "b"]);
    assert.throws(() => r.book.setClass("c", Limit.perSecond(1)), RateguardError);
    // @ts-expect-error: not a Limit
    assert.throws(() => r.book.setClasses([["a", 10]]), { name: "TypeError", message: /10/ });
    assert.throws(() => r.book.setClass("", Limit.perSecond(1)), RangeError);
  });
});

describe("key limits", () => {
  it("a key may have its own limit, or follow another class", () => {
    const r = rig(Limit.perSecond(10).burst(1));
    r.book.setClass("pro", Limit.perSecond(100).burst(1));
    r.book.setKeyLimit("", "vip", Limit.perSecond(50).burst(1));
    r.book.setKeyLimit("", "promoted", KeyLimit.class("pro"));
    assert.equal(offer(r, "vip", { perSec: 1_000, seconds: 1 }), 50);
    assert.equal(offer(r, "promoted", { perSec: 1_000, seconds: 1 }), 100);
    assert.equal(offer(r, "plain", { perSec: 1_000, seconds: 1 }), 10);
    // Following a class means following its changes.
    r.book.setClass("pro", Limit.perSecond(200).burst(1));
    assert.equal(offer(r, "promoted", { perSec: 1_000, seconds: 1, startMs: 1_000 }), 200);
    assert.equal(r.book.removeKeyLimit("", "vip"), true);
    assert.equal(r.book.removeKeyLimit("", "vip"), false);
    assert.equal(offer(r, "vip", { perSec: 1_000, seconds: 1, startMs: 1_000 }), 10);
  });

  it("a key whose own limit changes keeps its state: no fresh burst", () => {
    const r = rig(Limit.perSecond(10).burst(5));
    for (let i = 0; i < 5; i++) r.enforcer.check("", "k", 1, 0);
    r.book.setKeyLimit("", "k", Limit.perSecond(10).burst(50));
    // The five already admitted still count: 45 more, not 50.
    assert.equal(offer(r, "k", { perSec: 1e6, seconds: 1e-4 }), 45);
  });

  it("following a class this instance lacks is the default limit, counted", () => {
    const r = rig(Limit.perSecond(10).burst(1));
    r.book.setKeyLimit("", "k", KeyLimit.class("gone"));
    assert.equal(offer(r, "k", { perSec: 100, seconds: 1 }), 10);
    assert.equal(r.enforcer.counters.unknownClass, 100);
  });

  it("is bounded by maxKeyLimits, and setKeyLimits is all or nothing", () => {
    const r = rig(Limit.perSecond(10), { maxKeyLimits: 2 });
    r.book.setKeyLimit("", "a", Limit.perSecond(1));
    r.book.setKeyLimit("", "b", Limit.perSecond(1));
    r.book.setKeyLimit("", "b", Limit.perSecond(2)); // a change, not a third
    assert.throws(
      () => r.book.setKeyLimit("", "c", Limit.perSecond(1)),
      (e) => e instanceof RateguardError && e.code === "TooManyKeyLimits",
    );
    assert.throws(
      () =>
        r.book.setKeyLimits([["", "x", Limit.perSecond(1)], ["", "y", Limit.perSecond(1)], [
          "p",
          "x",
          Limit.perSecond(1),
        ]]),
      (e) => e instanceof RateguardError && e.code === "TooManyKeyLimits",
    );
    assert.deepEqual(r.book.keyLimits().map(([c, k, l]) => [c, k, String(l)]), [["", "a", "1/s"], [
      "",
      "b",
      "2/s",
    ]]);
    r.book.setKeyLimits([["p", "x", KeyLimit.class("p")]]);
    assert.deepEqual(r.book.keyLimits().map(([c, k, l]) => [c, k, String(l)]), [[
      "p",
      "x",
      "class:p",
    ]]);
    assert.throws(() => r.book.setKeyLimit("", "", Limit.perSecond(1)), TypeError);
  });
});

describe("shadow limits", () => {
  it("count what a new limit would deny, without deciding anything", () => {
    const r = rig(Limit.perSecond(100).burst(1));
    r.book.setShadow("", Limit.perSecond(20).burst(2));
    assert.equal(offer(r, "k", { perSec: 50, seconds: 10 }), 500);
    assert.equal(r.enforcer.counters.denied, 0);
    // The shadow admits its burst of 2, then 20 a second: 199 more in 10 s.
    assert.equal(r.enforcer.counters.shadowDenied, 500 - 2 - 199);
  });

  it("also see the attempts the real limit denied", () => {
    const r = rig(Limit.perSecond(10).burst(1));
    r.book.setShadow("", Limit.perSecond(100).burst(1));
    assert.equal(offer(r, "k", { perSec: 50, seconds: 10 }), 100);
    assert.equal(r.enforcer.counters.shadowDenied, 0, "the shadow would admit all 50 a second");
  });

  it("checkTraced returns both decisions; a key with its own limit has no shadow", () => {
    const r = rig(Limit.perSecond(100).burst(1));
    r.book.setClass("c", Limit.perSecond(100).burst(1));
    r.book.setShadow("c", Limit.perSecond(1).burst(1));
    const first = r.enforcer.checkTraced("c", "k", 1, 0);
    assert.equal(first.decision.allowed, true);
    assert.equal(first.shadow?.allowed, true);
    const second = r.enforcer.checkTraced("c", "k", 1, 10);
    assert.equal(second.decision.allowed, true);
    assert.equal(second.shadow?.allowed, false);
    assert.equal(second.shadow?.retryAfterMs, 990);
    r.book.setKeyLimit("c", "own", Limit.perSecond(100));
    assert.equal(r.enforcer.checkTraced("c", "own", 1, 0).shadow, undefined);
    r.book.setKeyLimit("", "follower", KeyLimit.class("c"));
    assert.notEqual(r.enforcer.checkTraced("", "follower", 1, 0).shadow, undefined);
  });

  it("belong to known classes; removing a class removes its shadow", () => {
    const r = rig(Limit.perSecond(100));
    assert.throws(
      () => r.book.setShadow("nope", Limit.perSecond(1)),
      (e) => e instanceof RateguardError && e.code === "UnknownClass" && /"nope"/.test(e.message),
    );
    r.book.setClass("c", Limit.perSecond(100));
    r.book.setShadows([["", Limit.perSecond(1)], ["c", Limit.perSecond(2)]]);
    assert.deepEqual(r.book.shadows().map(([c, l]) => [c, String(l)]), [["", "1/s"], ["c", "2/s"]]);
    r.book.removeClass("c");
    assert.deepEqual(r.book.shadows().map(([c]) => c), [""]);
    r.book.setShadow("", null);
    assert.deepEqual(r.book.shadows(), []);
    assert.throws(() => r.book.setShadows([["x", Limit.perSecond(1)]]), RateguardError);
  });
});

describe("dry run", () => {
  it("admits everything, counts would-be denials, and consumes nothing for them", () => {
    const r = rig(Limit.perSecond(10).burst(2));
    r.enforcer.dryRun = true;
    assert.equal(offer(r, "k", { perSec: 100, seconds: 1 }), 100);
    assert.equal(r.enforcer.counters.denied, 100 - 11);
    assert.equal(r.enforcer.counters.admitted, 11);
    r.enforcer.dryRun = false;
    // The would-be denials took nothing: at 1 s the key is where 11 admissions left it.
    assert.equal(offer(r, "k", { perSec: 100, seconds: 1, startMs: 1_000 }), 10);
    assert.equal(r.enforcer.peek("", "k", 2_000).allowed, true);
  });
});
