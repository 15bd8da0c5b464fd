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

  it("Limit.per holds any window: a quarter of an hour, a day, half a second", () => {
    const quarter = Limit.per(100, 15 * 60_000);
    assert.equal(quarter.periodMs(), 900_000);
    assert.equal(quarter.ratePerSec(), 100 / 900);
    assert.equal(quarter.toString(), "100/15min");
    assert.equal(Limit.per(10_000, 86_400_000).burst(10_000).toString(), "10000/d burst 10000");
    assert.equal(Limit.per(10, 500).toString(), "10/500ms");
    assert.equal(Limit.per(7, 90_000).toString(), "7/90s");
    assert.equal(Limit.per(3, 2 * 3_600_000).toString(), "3/2h");
    // The named periods print as their makers do, and equal them.
    assert.ok(Limit.per(5, 60_000).equals(Limit.perMinute(5)));
    assert.equal(Limit.per(5, 1_000).toString(), "5/s");
  });

  it("reads every text Limit.toString writes back to the same limit, JSON too", () => {
    const made = [
      Limit.per(100, 900_000),
      Limit.per(10_000, 86_400_000),
      Limit.per(1, 366 * 86_400_000),
      Limit.per(10, 500),
      Limit.per(7, 90_000),
      Limit.per(1, 1),
      Limit.perHour(5),
    ];
    for (const limit of made) {
      assert.ok(Limit.parse(limit.toString()).equals(limit), limit.toString());
      const json = JSON.parse(JSON.stringify(limit.burst(3)));
      assert.ok(Limit.parse(json.limit).burst(json.burst).equals(limit.burst(3)));
    }
    assert.ok(Limit.parse("100/15min").equals(Limit.per(100, 900_000)));
    assert.ok(Limit.parse("100 / 15 minutes").equals(Limit.per(100, 900_000)));
    assert.ok(Limit.parse("10000/day").equals(Limit.per(10_000, 86_400_000)));
    assert.ok(Limit.parse("10000/1d").equals(Limit.per(10_000, 86_400_000)));
    assert.ok(Limit.parse("10/500ms").equals(Limit.per(10, 500)));
  });

  it("refuses a period that is not a whole number of milliseconds up to 366 days", () => {
    for (const bad of [0, -1, 1.5, NaN, Infinity, 366 * 86_400_000 + 1]) {
      assert.throws(() => Limit.per(10, bad), {
        name: "RangeError",
        message: /^Limit\.per: the period must be a whole number of milliseconds from 1 to/,
      }, String(bad));
    }
    // @ts-expect-error: a period is a number of milliseconds
    assert.throws(() => Limit.per(10, "15min"), { name: "RangeError", message: /"15min"/ });
    assert.throws(() => Limit.per(0, 1_000), {
      name: "RangeError",
      message: /Limit\.per: the count/,
    });
    assert.throws(() => Limit.parse("10/0min"), { name: "RangeError", message: /"10\/0min"/ });
    assert.throws(() => Limit.parse("10/367d"), { name: "RangeError", message: /366 days/ });
    assert.throws(() => Limit.parse("10/1.5h"), { name: "TypeError", message: /"100\/15min"/ });
    assert.throws(() => Limit.parse("10/15"), TypeError);
    // A rate the clock cannot hold names its period as written.
    assert.throws(() => Limit.per(4_000_000, 1).burst(1), {
      name: "RangeError",
      message: /4000000\/ms with a burst of 1/,
    });
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
