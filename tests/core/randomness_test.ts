// The core draws no randomness of its own (DESIGN.md: it is a parameter), so
// a node built without a seed is refused rather than given one that every
// start, and anyone who knows its address, would share: the same life after
// a restart (not told from the one before) and sequence numbers a stranger
// could compute.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Enforcer } from "../../src/core/enforcer.ts";
import { FleetNode } from "../../src/core/fleet_node.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import { Limit } from "../../src/core/limit.ts";
import { type MembershipOptions, Node } from "../../src/core/membership/mod.ts";
import { PartitionPolicy } from "../../src/core/partition.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { Address } from "../../src/proto/mod.ts";

const ADDRESS = Address.parse("10.0.0.1:7946");
const MESSAGE = /membership\.seed: expected an integer, got .*: draw one with getRandomValues/;

function fleetNode(membership: unknown): FleetNode {
  const book = new LimitBook(Limit.perSecond(100), { maxClasses: 4, maxKeyLimits: 4 });
  const enforcer = new Enforcer(book, {
    capacity: 64,
    overflowScale: 0.5,
    fleet: { hashKey: PUBLIC_HASH_KEY },
  });
  return new FleetNode({
    address: ADDRESS,
    book,
    enforcer,
    policy: PartitionPolicy.holdDown(),
    membership: membership as MembershipOptions,
  });
}

describe("a core node's randomness", () => {
  it("is refused when missing, naming the option and where to draw it", () => {
    for (const options of [{}, { seed: 1.5 }, { seed: "1" }]) {
      assert.throws(() => new Node(ADDRESS, options as MembershipOptions), {
        name: "TypeError",
        message: MESSAGE,
      });
      assert.throws(() => fleetNode(options), { name: "TypeError", message: MESSAGE });
    }
    assert.throws(() => fleetNode(undefined), { name: "TypeError", message: MESSAGE });
  });

  it("follows from the seed alone: two starts at one address differ when their seeds do", () => {
    const lives = new Set<number>();
    for (let seed = 0; seed < 64; seed++) lives.add(new Node(ADDRESS, { seed }).life);
    assert.equal(lives.size, 64);
    assert.equal(new Node(ADDRESS, { seed: 7 }).life, new Node(ADDRESS, { seed: 7 }).life);
  });
});
