// The fleet's index of keys by hash: a key is found by the hash a peer names,
// and leaves the index with its slot.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { KeyHashIndex } from "../../src/core/hash_index.ts";
import { hashId, keyHash64, PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import { Slot } from "../../src/core/keytable.ts";
import { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { ruleOf } from "../../src/core/rule.ts";
import { Enforcer } from "../../src/core/enforcer.ts";

const rule = ruleOf(Limit.perSecond(10), undefined, false, 1);

describe("key hash index", () => {
  it("hashes a slot's key once and finds the slot by its hash id", () => {
    const index = new KeyHashIndex(PUBLIC_HASH_KEY);
    const slot = new Slot("pro", "tenant:42", rule, 0);
    index.add(slot);
    const expected = keyHash64(PUBLIC_HASH_KEY, "pro", "tenant:42");
    assert.deepEqual(slot.hash, expected);
    assert.equal(index.get(hashId(expected)), slot);
    assert.equal(index.get(hashId(keyHash64(PUBLIC_HASH_KEY, "", "tenant:42"))), undefined);
    index.delete(slot);
    assert.equal(index.get(hashId(expected)), undefined);
    assert.equal(index.size, 0);
  });

  it("deleting a slot that was replaced leaves its successor", () => {
    const index = new KeyHashIndex(PUBLIC_HASH_KEY);
    const old = new Slot("", "k", rule, 0), fresh = new Slot("", "k", rule, 0);
    index.add(old);
    index.add(fresh);
    index.delete(old);
    assert.equal(index.get(hashId(fresh.hash!)), fresh);
  });

  it("an enforcer in a fleet indexes each key that takes a place, and forgets the evicted", () => {
    const book = new LimitBook(Limit.perSecond(1_000), { maxClasses: 4, maxKeyLimits: 4 });
    const enforcer = new Enforcer(book, {
      capacity: 2,
      overflowScale: 0.5,
      fleet: { hashKey: PUBLIC_HASH_KEY },
    });
    const id = (key: string) => hashId(keyHash64(PUBLIC_HASH_KEY, "", key));
    enforcer.check("", "a", 1, 0);
    enforcer.check("", "b", 1, 0);
    assert.equal(enforcer.hashes?.get(id("a"))?.key, "a");
    assert.equal(enforcer.hashes?.size, 2);
    enforcer.prune(60_000); // both replenished
    assert.equal(enforcer.hashes?.get(id("a")), undefined);
    assert.equal(enforcer.hashes?.size, 0);
  });

  it("a standalone enforcer has no index and hashes no key", () => {
    const book = new LimitBook(Limit.perSecond(10), { maxClasses: 4, maxKeyLimits: 4 });
    const enforcer = new Enforcer(book, { capacity: 8, overflowScale: 0.5 });
    enforcer.check("", "a", 1, 0);
    assert.equal(enforcer.hashes, undefined);
    assert.equal(enforcer.table.get("", "a")?.hash, undefined);
  });
});
