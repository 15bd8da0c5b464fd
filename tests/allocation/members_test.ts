import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CountedMembers } from "../../src/core/allocation/members.ts";
import { PartitionPolicy } from "../../src/core/partition.ts";
import type { MemberChange } from "../../src/core/membership/mod.ts";
import { Address } from "../../src/proto/mod.ts";

function change(
  i: number,
  state: "alive" | "suspect" | "dead" | "left" | "forgotten",
  nowMs: number,
): MemberChange {
  const address = Address.parse(`10.0.0.${i}:7946`);
  return { member: { id: address.id, address, state, incarnation: 0 }, previous: undefined, nowMs };
}

function cluster(policy: PartitionPolicy): CountedMembers {
  const m = new CountedMembers(policy);
  for (let i = 2; i <= 5; i++) m.apply(change(i, "alive", 0));
  return m;
}

describe("members counted by partition policy", () => {
  it("Optimistic shares among the live only, at once", () => {
    const m = cluster(PartitionPolicy.optimistic());
    m.apply(change(5, "suspect", 100));
    assert.equal(m.view(100).countedSize, 4);
    m.apply(change(4, "dead", 200));
    assert.equal(m.view(200).countedSize, 3);
  });

  it("HoldDown keeps a lost member's place for the hold, from its death", () => {
    const m = cluster(PartitionPolicy.holdDown(10_000));
    m.apply(change(5, "suspect", 100));
    assert.equal(m.view(100).countedSize, 5, "a suspect is not lost");
    m.apply(change(5, "dead", 6_000));
    const held = m.view(15_999);
    assert.equal(held.countedSize, 5);
    assert.ok(held.counts(Address.parse("10.0.0.5:7946").id.toString()));
    assert.equal(m.view(16_000).countedSize, 4);
    m.apply(change(4, "left", 16_000));
    assert.equal(m.view(16_001).countedSize, 3, "a member that left is not held");
  });

  it("Quorum holds the minority, counting every member it knows", () => {
    const m = cluster(PartitionPolicy.quorum());
    for (const i of [3, 4, 5]) m.apply(change(i, "suspect", 100));
    const minority = m.view(100);
    assert.equal(minority.withoutQuorum, true, "suspects do not vouch for a quorum");
    assert.equal(minority.countedSize, 5);
    const majority = cluster(PartitionPolicy.quorum());
    for (const i of [4, 5]) majority.apply(change(i, "dead", 100));
    assert.equal(majority.view(100).withoutQuorum, false);
    assert.equal(majority.view(100).countedSize, 3);
    majority.apply(change(4, "forgotten", 600_000));
    majority.apply(change(5, "forgotten", 600_000));
    assert.equal(majority.view(600_000).countedSize, 3);
  });
});

describe("members that have just joined", () => {
  const idOf = (i: number) => Address.parse(`10.0.0.${i}:7946`).id.toString();

  it("are those first heard of alive since a time; a death or a refuted suspicion is no join", () => {
    const m = cluster(PartitionPolicy.holdDown(10_000));
    m.apply(change(6, "alive", 1_000));
    m.apply(change(7, "alive", 2_000));
    m.apply(change(4, "suspect", 2_100));
    m.apply(change(4, "alive", 2_200));
    m.apply(change(7, "dead", 2_300));
    assert.deepEqual([...m.joinedSince(0)], [2, 3, 4, 5, 6].map(idOf), "7 died");
    assert.deepEqual([...m.joinedSince(500)], [idOf(6)], "4 joined at 0, not again at 2200");
    assert.deepEqual([...m.joinedSince(1_500)], []);
  });
});
