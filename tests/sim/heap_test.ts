import { it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { EventHeap } from "../../src/sim/driver/heap.ts";

it("EventHeap pops by time, and in insertion order among equal times", () => {
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 20 }), { maxLength: 3000 }), (times) => {
      const heap = new EventHeap<{ atMs: number; n: number }>();
      times.forEach((atMs, n) => heap.push(atMs, { atMs, n }));
      const expected = times.map((atMs, n) => ({ atMs, n })).sort((a, b) =>
        a.atMs - b.atMs || a.n - b.n
      );
      const popped = [];
      for (let at = heap.peekAtMs(); at < Infinity; at = heap.peekAtMs()) {
        const e = heap.pop()!;
        assert.equal(at, e.atMs);
        popped.push(e);
      }
      assert.equal(heap.pop(), undefined);
      assert.equal(heap.size, 0);
      assert.deepEqual(popped, expected);
    }),
    { numRuns: 50 },
  );
});

it("EventHeap keeps its order when pushes and pops interleave past its first capacity", () => {
  const heap = new EventHeap<number>();
  const popped: number[] = [];
  let n = 0;
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 900; i++, n++) heap.push(Math.floor(n / 7), n);
    for (let i = 0; i < 300; i++) popped.push(heap.pop()!);
  }
  while (heap.size > 0) popped.push(heap.pop()!);
  assert.deepEqual(popped, [...popped].sort((a, b) => a - b));
  assert.equal(popped.length, n);
});
