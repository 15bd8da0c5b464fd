import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { KeyLimit, Limit, MAX_BURST } from "../../mod.ts";

describe("Limit", () => {
  it("reads back what it was given", () => {
    const l = Limit.perMinute(1_000);
    assert.equal(l.count(), 1_000);
    assert.equal(l.periodMs(), 60_000);
    assert.equal(l.ratePerSec(), 1_000 / 60);
    assert.equal(Limit.perHour(5_000).periodMs(), 3_600_000);
    assert.equal(Limit.perSecond(7).ratePerSec(), 7);
  });

  it("keeps its units: perMinute(60) and perSecond(1) admit alike but differ", () => {
    assert.equal(Limit.perMinute(60).ratePerSec(), Limit.perSecond(1).ratePerSec());
    assert.equal(Limit.perMinute(60).equals(Limit.perSecond(1)), false);
    assert.equal(Limit.perMinute(60).equals(Limit.perMinute(60)), true);
    assert.equal(Limit.perMinute(60).toString(), "60/min");
  });

  it("holds slow rates at their rate, never rounded up", () => {
    assert.equal(Limit.perHour(1).ratePerSec(), 1 / 3600);
    assert.equal(Limit.perHour(1).intervalMs(), 3_600_000);
  });

  it("defaults the burst to a twentieth of the count, at least 1, at most the cap", () => {
    assert.equal(Limit.perSecond(1_000).burstSize(), 50);
    assert.equal(Limit.perSecond(19).burstSize(), 1);
    assert.equal(Limit.perSecond(1).burstSize(), 1);
    assert.equal(Limit.perSecond(4_000_000_000).burstSize(), MAX_BURST);
    assert.equal(Limit.perSecond(100).burst(0).burstSize(), 1);
    assert.equal(Limit.perSecond(100).burst(7).burstSize(), 7);
    assert.equal(Limit.perSecond(100).burst(MAX_BURST).burstSize(), MAX_BURST);
  });

  it("parses the CLI forms", () => {
    assert.ok(Limit.parse("1000").equals(Limit.perSecond(1_000)));
    assert.ok(Limit.parse("1000/s").equals(Limit.perSecond(1_000)));
    assert.ok(Limit.parse("1000/min").equals(Limit.perMinute(1_000)));
    assert.ok(Limit.parse("5000/h").equals(Limit.perHour(5_000)));
    assert.ok(Limit.parse(" 12 / hour ").equals(Limit.perHour(12)));
  });

  it("refuses bad input with a message naming the value", () => {
    assert.throws(() => Limit.parse("ten/s"), { name: "TypeError", message: /"ten\/s"/ });
    assert.throws(() => Limit.parse("10/fortnight"), { name: "TypeError", message: /fortnight/ });
    assert.throws(() => Limit.parse("0/s"), { name: "RangeError", message: /0/ });
    assert.throws(() => Limit.perSecond(-5), { name: "RangeError", message: /-5/ });
    assert.throws(() => Limit.perSecond(NaN), { name: "RangeError", message: /NaN/ });
    assert.throws(() => Limit.perSecond(Infinity), { name: "RangeError", message: /Infinity/ });
    assert.throws(() => Limit.perSecond(1.5), { name: "RangeError", message: /1\.5/ });
    assert.throws(() => Limit.perSecond(10).burst(MAX_BURST + 1), {
      name: "RangeError",
      message: /4194304/,
    });
    assert.throws(() => Limit.perSecond(10).burst(-1), RangeError);
    // @ts-expect-error: a number is not a limit string
    assert.throws(() => Limit.parse(1000), TypeError);
  });

  it("KeyLimit.class names a class", () => {
    assert.equal(KeyLimit.class("pro").className, "pro");
    // @ts-expect-error: not a string
    assert.throws(() => KeyLimit.class(3), TypeError);
  });
});

describe("a Limit printed", () => {
  // What console.log shows: Deno's inspector on Deno, node:util's elsewhere (Bun's follows Node's).
  const deno = (globalThis as { Deno?: { inspect(v: unknown): string } }).Deno;
  const shown = (v: unknown) => deno ? deno.inspect(v) : inspect(v);

  it("reads as the limit, alone, nested, and as a key's", () => {
    assert.equal(shown(Limit.perMinute(1_000).burst(10)), "Limit(1000/min, burst 10)");
    assert.equal(shown(Limit.perSecond(100)), "Limit(100/s, burst 5)");
    assert.match(shown([["pro", "tenant:42", Limit.perHour(7)]]), /Limit\(7\/h, burst 1\)/);
    assert.equal(shown(KeyLimit.class("pro")), 'KeyLimit(class "pro")');
    // node:util's inspector on every runtime, Deno's too.
    assert.equal(inspect({ limit: Limit.perSecond(3) }), "{ limit: Limit(3/s, burst 1) }");
  });
});
