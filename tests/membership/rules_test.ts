import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Address,
  type MemberChange,
  type MemberRecord,
  Prng,
} from "../../src/core/membership/mod.ts";
import { resolveConfig, suspicionBoundsMs } from "../../src/core/membership/config.ts";
import { MemberTable } from "../../src/core/membership/table.ts";
import { Broadcasts, retransmitLimit } from "../../src/core/membership/broadcasts.ts";
import { suspicionTimeoutMs } from "../../src/core/membership/suspicion.ts";
import { record, suspect } from "./helpers.ts";

function table(options = {}): { table: MemberTable; changes: MemberChange[] } {
  const changes: MemberChange[] = [];
  return { table: new MemberTable(resolveConfig(options), (c) => changes.push(c)), changes };
}

const RANK = { alive: 0, suspect: 1, dead: 2, left: 2 };

describe("MemberTable", () => {
  it("lets suspect beat alive at one incarnation, and dead beat both", () => {
    const { table: t } = table();
    t.apply(record(2, "alive", 0), 0);
    assert.equal(t.apply(suspect(2, 3, 0), 0), "changed");
    assert.equal(t.apply(record(2, "alive", 0), 0), "stale");
    assert.equal(t.apply(record(2, "alive", 1), 0), "changed");
    assert.equal(t.apply(record(2, "dead", 1), 0), "changed");
    assert.equal(t.apply(record(2, "alive", 1), 0), "stale", "a tombstone stops stale news");
    assert.equal(t.apply(suspect(2, 3, 2), 0), "stale", "a suspicion proves no life");
    assert.equal(t.apply(record(2, "alive", 2), 0), "changed");
  });

  it("ignores news of the death of members it never knew", () => {
    const { table: t } = table();
    assert.equal(t.apply(record(2, "dead", 4), 0), "stale");
    assert.equal(t.apply(record(3, "left", 0), 0), "stale");
    assert.equal(t.size, 0);
  });

  it("never lets a member's (incarnation, state) go back, whatever the order of news", () => {
    const news = fc.array(
      fc.tuple(
        fc.nat({ max: 3 }),
        fc.constantFrom("alive", "suspect", "dead", "left" as const),
        fc.nat({ max: 4 }),
      ),
      { maxLength: 40 },
    );
    fc.assert(fc.property(news, (items) => {
      const { table: t } = table();
      t.apply(record(2, "alive", 0), 0);
      let last = [0, 0];
      for (const [incarnation, state, by] of items) {
        const r: MemberRecord = state === "suspect"
          ? suspect(2, by + 3, incarnation)
          : record(2, state, incarnation);
        t.apply(r, 0);
        const m = t.get("10.0.0.2:7946")!;
        const now = [m.incarnation, RANK[m.state]];
        assert.ok(
          now[0] > last[0] || (now[0] === last[0] && now[1] >= last[1]),
          `${last} -> ${now}`,
        );
        last = now;
      }
    }));
  });

  it("turns a suspicion into death at the Lifeguard timeout, sooner with confirmations", () => {
    const { table: t } = table();
    for (let i = 2; i <= 6; i++) t.apply(record(i, "alive", 0), 0);
    t.apply(suspect(2, 3, 0), 1_000);
    assert.equal(t.nextDeadlineMs(), 7_000);
    assert.equal(t.apply(suspect(2, 4, 0), 1_500), "confirmed");
    assert.equal(t.apply(suspect(2, 4, 0), 1_600), "stale", "one witness counts once");
    const deadline = t.nextDeadlineMs()!;
    assert.ok(deadline < 7_000 && deadline > 3_000);
    assert.deepEqual(t.expire(deadline - 1), []);
    assert.deepEqual(t.expire(deadline).map((m) => m.key), ["10.0.0.2:7946"]);
    assert.equal(t.get("10.0.0.2:7946")?.state, "dead");
  });

  it("gives a suspect longer in a large fleet: the bounds times log10 of the live members", () => {
    // Member i at 10.0.x.y, so that a table may hold a thousand.
    const at = (i: number) => Address.parse(`10.0.${i >> 8}.${i & 255}:7946`);
    const alive = (i: number): MemberRecord => ({
      state: "alive",
      address: at(i),
      id: at(i).id,
      incarnation: 0,
    });
    const suspectOf = (i: number, by: number): MemberRecord => ({
      ...alive(i),
      state: "suspect",
      from: at(by).id,
    });
    // 999 others and this node: a suspicion of 1000 members, with three
    // witnesses, is given 1.75 × 2 s (the least grows no further); a lone
    // accuser's, 3 × 6 s.
    const { table: t } = table();
    for (let i = 2; i <= 1_000; i++) t.apply(alive(i), 0);
    t.apply(suspectOf(2, 3), 1_000);
    assert.equal(t.nextDeadlineMs(), 1_000 + 18_000);
    for (const by of [4, 5, 6]) assert.equal(t.apply(suspectOf(2, by), 1_000), "confirmed");
    assert.equal(t.nextDeadlineMs(), 1_000 + 3_500);
    assert.deepEqual(t.expire(4_499), []);
    assert.deepEqual(t.expire(4_500).map((m) => m.key), [at(2).toString()]);
    // Up to ten members, the configured bounds as they are.
    const { table: small } = table();
    for (let i = 2; i <= 10; i++) small.apply(alive(i), 0);
    small.apply(suspectOf(2, 3), 0);
    assert.equal(small.nextDeadlineMs(), 6_000);
  });

  it("forgets a tombstone after tombstoneMs, and says so", () => {
    const { table: t, changes } = table({ tombstoneMs: 1_000 });
    t.apply(record(2, "alive", 0), 0);
    t.apply(record(2, "left", 0), 100);
    t.expire(1_099);
    assert.equal(t.tombstones, 1);
    t.expire(1_100);
    assert.equal(t.size, 0);
    assert.deepEqual(changes.map((c) => [c.previous, c.member.state]), [
      [undefined, "alive"],
      ["alive", "left"],
      ["left", "forgotten"],
    ]);
  });
});

describe("suspicionTimeoutMs", () => {
  it("starts at the maximum, reaches the minimum at k confirmations, and never rises", () => {
    const bounds = { minMs: 2_000, maxMs: 6_000, expected: 3 };
    assert.equal(suspicionTimeoutMs(0, bounds), 6_000);
    assert.equal(Math.round(suspicionTimeoutMs(1, bounds)), 4_000);
    assert.equal(suspicionTimeoutMs(3, bounds), 2_000);
    assert.equal(suspicionTimeoutMs(9, bounds), 2_000);
    assert.equal(suspicionTimeoutMs(5, { ...bounds, expected: 0 }), 6_000);
    for (let c = 0; c < 10; c++) {
      assert.ok(suspicionTimeoutMs(c + 1, bounds) <= suspicionTimeoutMs(c, bounds));
    }
  });
});

describe("suspicionBoundsMs", () => {
  it("keeps the configured bounds up to 10 live members and scales both by log10 beyond", () => {
    const config = resolveConfig({ protocolPeriodMs: 100 });
    const at = (n: number) => suspicionBoundsMs(config, n);
    assert.deepEqual([0, 1, 10].map(at), Array(3).fill({ minMs: 1_000, maxMs: 3_000 }));
    // The least grows up to 1.75 times (56 members), so that a crash
    // confirmed by three members is known by all within 5 s at a thousand.
    assert.deepEqual(at(100), { minMs: 1_750, maxMs: 6_000 });
    assert.deepEqual(at(10_000), { minMs: 1_750, maxMs: 12_000 });
    assert.ok(at(50).minMs > at(10).minMs && at(50).minMs < at(100).minMs);
    assert.ok(at(200).maxMs > at(100).maxMs && at(200).maxMs < at(1_000).maxMs);
  });
});

describe("Broadcasts", () => {
  it("sends each record λ·⌈log10(N+1)⌉ times, the least sent first, within the budget", () => {
    assert.deepEqual([1, 5, 9, 50, 8192].map((n) => retransmitLimit(4, n)), [4, 4, 4, 8, 16]);
    const queue = new Broadcasts();
    queue.push("a", record(2, "alive"));
    queue.push("b", record(3, "alive"));
    // 20 bytes of record and 4 of its life in the lives section.
    assert.equal(queue.take(24, { limit: 2 }).length, 1, "one 24-byte record fits in 24 bytes");
    const second = queue.take(1_000, { limit: 2 });
    assert.equal(second[0].address.toString(), "10.0.0.3:7946", "the unsent one goes first");
    queue.take(1_000, { limit: 2 });
    assert.equal(queue.size, 0);
  });
});

describe("Prng", () => {
  it("replays from its seed, stays in range, and shuffles into permutations", () => {
    const a = new Prng(5);
    const b = new Prng(5);
    const xs = Array.from({ length: 100 }, () => a.nextU32());
    assert.deepEqual(xs, Array.from({ length: 100 }, () => b.nextU32()));
    assert.notDeepEqual(xs, Array.from({ length: 100 }, () => new Prng(6).nextU32()));
    fc.assert(fc.property(fc.integer({ min: 1, max: 1_000 }), fc.integer(), (n, seed) => {
      const prng = new Prng(seed);
      const x = prng.below(n);
      assert.ok(Number.isInteger(x) && x >= 0 && x < n);
      const f = prng.nextFloat();
      assert.ok(f >= 0 && f < 1);
      const items = Array.from({ length: n % 20 }, (_, i) => i);
      assert.deepEqual([...prng.shuffle([...items])].sort((p, q) => p - q), items);
    }));
    assert.throws(() => new Prng(1.5), TypeError);
    assert.throws(() => a.below(0), RangeError);
  });

  it("draws evenly", () => {
    const prng = new Prng(11);
    const counts = [0, 0, 0, 0, 0];
    for (let i = 0; i < 50_000; i++) counts[prng.below(5)]++;
    for (const count of counts) assert.ok(Math.abs(count - 10_000) < 400, `${counts}`);
  });
});
