import { it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { EventHeap } from "../../src/sim/driver/heap.ts";

it("EventHeap pops by time, and in insertion order among equal times", () => {
  fc.assert(fc.property(fc.array(fc.nat({ max: 20 }), { maxLength: 200 }), (times) => {
    const heap = new EventHeap<{ atMs: number; n: number }>();
    times.forEach((atMs, n) => heap.push({ atMs, n }));
    const expected = times.map((atMs, n) => ({ atMs, n })).sort((a, b) =>
      a.atMs - b.atMs || a.n - b.n
    );
    const popped = [];
    for (let e = heap.pop(); e; e = heap.pop()) popped.push(e);
    assert.deepEqual(popped, expected);
  }));
});
