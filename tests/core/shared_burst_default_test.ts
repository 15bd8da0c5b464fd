import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { MIN_SHARED_BURST, sharesBurstAt } from "../../src/core/rule.ts";
import { COLD_FRACTION } from "../../src/core/options.ts";

const BOUNDS = { maxClasses: 4, maxKeyLimits: 4 };

describe("the burst when sharedBurst is not set", () => {
  it("is shared once a burst on each instance would pass half the limit's second", () => {
    const perSecond = Limit.perSecond(1_000).burst(50);
    assert.equal(sharesBurstAt(perSecond, 10, COLD_FRACTION), false, "10 × 50 = R/2");
    assert.equal(sharesBurstAt(perSecond, 11, COLD_FRACTION), true);
    assert.equal(sharesBurstAt(Limit.perMinute(1_000), 2, COLD_FRACTION), true, "50 > 8.3");
    assert.equal(sharesBurstAt(Limit.perMinute(1_000), 1, COLD_FRACTION), true);
  });

  it("follows the fleet's size in the book, and a said true or false wins", () => {
    const book = new LimitBook(Limit.perSecond(1_000).burst(50), BOUNDS);
    book.setSharedBurst(undefined);
    book.setScale(0.5 / 5);
    book.setFleetSize(5);
    const unitsOf = () => {
      const r = book.resolve("", "k");
      return r.toleranceUnits / r.unitsPerRequest;
    };
    assert.equal(unitsOf(), 50, "five instances: a burst on each");
    const epoch = book.epoch;
    book.setScale(0.5 / 50);
    book.setFleetSize(50);
    assert.ok(book.epoch > epoch);
    assert.equal(unitsOf(), MIN_SHARED_BURST, "fifty: the least part of a shared burst");
    book.setSharedBurst(false);
    assert.equal(unitsOf(), 50, "false: a burst on each at any size");
    book.setSharedBurst(true);
    book.setFleetSize(5);
    assert.ok(unitsOf() < 50, "true: shared at any size");
  });
});
