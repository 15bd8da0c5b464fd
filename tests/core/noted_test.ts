// The noted keys on their own: bounded, and making room only from keys that
// have cooled, at most once a FORGET_EVERY_MS. (tests/runtime/noted_test.ts
// checks what the stats read of them.)
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FORGET_EVERY_MS, MAX_NOTED, NotedKeys } from "../../src/core/noted.ts";
import { Slot } from "../../src/core/keytable.ts";
import { Limit } from "../../src/core/limit.ts";
import { ruleOf } from "../../src/core/rule.ts";

const rule = ruleOf(Limit.perSecond(1).burst(1), undefined, false, 1);

/** A slot born at 0 that was denied `denied` times. */
function denied(key: string, times = 1): Slot {
  const slot = new Slot("", key, rule, 0);
  slot.requests = times + 1;
  slot.denied = times;
  return slot;
}

const keys = (n: NotedKeys) => [...n].map((s) => s.key);
const us = (ms: number) => ms * 1_000;

describe("NotedKeys", () => {
  it("notes each key once, up to its bound", () => {
    const n = new NotedKeys({ max: 2 });
    const a = denied("a");
    n.note(a, 0);
    n.note(a, 0);
    n.note(denied("b"), 0);
    n.note(denied("c"), 0);
    assert.deepEqual(keys(n), ["a", "b"], "full of keys still denied: the newcomer waits");
  });

  it("makes room from keys that have cooled, once the set is full", () => {
    const n = new NotedKeys({ max: 2 });
    n.note(denied("a"), 0);
    n.note(denied("b"), 0);
    n.note(denied("late"), us(600_000));
    assert.deepEqual(keys(n), ["late"]);
  });

  it("sweeps for cooled keys at most once a FORGET_EVERY_MS", () => {
    const n = new NotedKeys({ max: 1 });
    n.note(denied("a"), 0);
    n.note(denied("soon"), us(600_000)); // a sweep: a has cooled
    assert.deepEqual(keys(n), ["soon"]);
    // soon, born at 0 and denied once, has cooled too, but the last sweep was just now.
    n.note(denied("again"), us(600_000 + FORGET_EVERY_MS - 1));
    assert.deepEqual(keys(n), ["soon"], "no second sweep within FORGET_EVERY_MS");
    n.note(denied("later"), us(600_000 + FORGET_EVERY_MS));
    assert.deepEqual(keys(n), ["later"]);
  });

  it("reads time on the caller's clock from its origin", () => {
    const n = new NotedKeys({ max: 1, originMs: 600_000 });
    const old = denied("old"); // born at 0 ms on the caller's clock
    n.note(old, 0);
    n.note(denied("new"), 0); // at 600,000 ms: old has cooled
    assert.deepEqual(keys(n), ["new"]);
  });

  it("forgets a slot that left the table", () => {
    const n = new NotedKeys();
    const a = denied("a");
    n.note(a, 0);
    n.delete(a);
    assert.equal(n.size, 0);
    assert.ok(MAX_NOTED >= 1);
  });
});
