// The allocator's candidate queue: each key once, bounded, never a hot key.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  CandidateQueue,
  MAX_CANDIDATES,
  nearsColdShare,
  NOMINATE_FRACTION,
} from "../../src/core/allocation/candidates.ts";
import { Slot } from "../../src/core/keytable.ts";
import { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { ruleOf } from "../../src/core/rule.ts";
import { Enforcer } from "../../src/core/enforcer.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";

const rule = ruleOf(Limit.perSecond(10).burst(10), undefined, false, 1);
const slot = (key: string) => new Slot("", key, rule, 0);

describe("candidate queue", () => {
  it("hands each nominated key over once, then may take it again", () => {
    const q = new CandidateQueue();
    const a = slot("a"), b = slot("b");
    q.nominate(a);
    q.nominate(b);
    assert.ok(a.candidate && b.candidate, "queued keys are flagged");
    assert.deepEqual(q.take().map((s) => s.key), ["a", "b"]);
    assert.equal(q.size, 0);
    assert.ok(!a.candidate && !b.candidate, "taken keys may be nominated again");
    assert.deepEqual(q.take(), []);
    q.nominate(a);
    assert.deepEqual(q.take().map((s) => s.key), ["a"]);
  });

  it("skips a key the allocator already holds hot", () => {
    const q = new CandidateQueue();
    const hot = slot("hot");
    hot.hot = { rule };
    q.nominate(hot);
    assert.equal(q.size, 0);
    assert.equal(hot.candidate, false);
  });

  it("holds at most MAX_CANDIDATES between two takes", () => {
    const q = new CandidateQueue();
    const slots = Array.from({ length: MAX_CANDIDATES + 10 }, (_, i) => slot(`k${i}`));
    for (const s of slots) q.nominate(s);
    assert.equal(q.size, MAX_CANDIDATES);
    assert.equal(slots.at(-1)!.candidate, false, "a key left out is nominated again later");
    assert.equal(q.take().length, MAX_CANDIDATES);
  });

  it("a key nears its cold share past NOMINATE_FRACTION of its burst", () => {
    const edge = NOMINATE_FRACTION * rule.toleranceUnits;
    assert.equal(nearsColdShare(Math.floor(edge), rule), false);
    assert.equal(nearsColdShare(Math.floor(edge) + 1, rule), true);
  });

  it("an enforcer in a fleet queues a key spending past half its burst, and a denied one", () => {
    const { enforcer } = rigInFleet();
    for (let i = 0; i < 5; i++) enforcer.check("", "steady", 1, 0);
    assert.deepEqual(enforcer.candidates.take(), [], "half the burst is not yet near");
    enforcer.check("", "steady", 1, 0);
    assert.deepEqual(enforcer.candidates.take().map((s) => s.key), ["steady"]);
    for (let i = 0; i < 11; i++) enforcer.check("", "denied", 1, 0);
    assert.deepEqual(enforcer.candidates.take().map((s) => s.key), ["denied"], "once");
  });
});

function rigInFleet(): { enforcer: Enforcer } {
  const book = new LimitBook(Limit.perSecond(10).burst(10), { maxClasses: 4, maxKeyLimits: 4 });
  const fleet = { hashKey: PUBLIC_HASH_KEY };
  return { enforcer: new Enforcer(book, { capacity: 64, overflowScale: 0.5, fleet }) };
}
