import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Limit, Secret } from "../../mod.ts";
import { Address, Enforcer, FleetNode, LimitBook, PartitionPolicy } from "../../src/core/mod.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import { Allocator } from "../../src/core/allocation/allocator.ts";
import {
  decodeReports,
  groupBytes,
  MAX_RECORDS_PER_GROUP,
} from "../../src/core/allocation/report.ts";
import { GUARD_BOUNDS } from "../../src/core/options.ts";
import { mostDenied } from "../../src/runtime/keystats.ts";

const fleetParts = () => {
  const book = new LimitBook(Limit.perSecond(1_000).burst(10), {
    maxClasses: 64,
    maxKeyLimits: 4_096,
  });
  const enforcer = new Enforcer(book, {
    capacity: 8_192,
    overflowScale: 0.5,
    fleet: { hashKey: PUBLIC_HASH_KEY },
  });
  return { book, enforcer };
};

describe("hotKeys cannot break a fleet node", () => {
  it("FleetNode refuses hotKeys outside 1 to the records a report carries", () => {
    assert.equal(GUARD_BOUNDS.hotKeys.max, MAX_RECORDS_PER_GROUP);
    for (const hotKeys of [0, 65, 70, 100, 1.5, NaN]) {
      assert.throws(
        () =>
          new FleetNode({
            address: Address.parse("10.0.0.1:7946"),
            ...fleetParts(),
            policy: PartitionPolicy.holdDown(),
            hotKeys,
            membership: { seed: 1 },
          }),
        (e: unknown) => e instanceof RangeError && /hotKeys/.test(e.message),
        `hotKeys ${hotKeys}`,
      );
    }
  });

  it("the outgoing report keeps what fits and counts what was cut, never throws", () => {
    const { book, enforcer } = fleetParts();
    const allocator = new Allocator(book, enforcer, {
      id: { hi: 1, lo: 2 },
      life: () => 1,
    }, { policy: PartitionPolicy.holdDown(), hotKeys: 64, protocolPeriodMs: 200 });
    const holds = { joining: false, membersFull: false, maxMembers: 8_192 };
    // 64 keys each past half its burst: all 64 turn hot.
    for (let k = 0; k < 64; k++) {
      for (let i = 0; i < 10; i++) enforcer.check("", `k${k}`, 1, 0);
    }
    allocator.tick(0, holds);
    assert.equal(allocator.stats(0).hotKeys, 64);
    const to = { id: Address.parse("10.0.0.9:7946").id } as Parameters<Allocator["outgoing"]>[1];
    const whole = allocator.outgoing(1, to, 1_400)!;
    assert.equal(whole.length, 2 + groupBytes(64));
    // Room for ten records only: ten go, 54 are counted as cut.
    const cut = allocator.outgoing(2, to, 2 + groupBytes(10))!;
    const decoded = decodeReports(cut);
    assert.ok(decoded.ok);
    assert.equal(decoded.groups[0].records.length, 10);
    assert.equal(allocator.stats(2).cutRecords, 54);
    // Not even a group header: nothing to send, nothing thrown.
    assert.equal(allocator.outgoing(3, to, 10), undefined);
  });
});

describe("mostDenied", () => {
  it("lists a key once after its slot was evicted and made again", () => {
    const book = new LimitBook(Limit.perSecond(10).burst(1), { maxClasses: 4, maxKeyLimits: 4 });
    const enforcer = new Enforcer(book, { capacity: 2, overflowScale: 0.5 });
    // "a" is denied, replenishes, and loses its place to newcomers.
    enforcer.check("", "a", 1, 0);
    enforcer.check("", "a", 1, 0);
    enforcer.check("", "b", 1, 1_000);
    enforcer.check("", "c", 1, 1_000);
    assert.equal(enforcer.table.get("", "a"), undefined, "evicted");
    // Back, and denied again: a new slot for the same key.
    enforcer.check("", "a", 1, 2_000);
    enforcer.check("", "a", 1, 2_000);
    const { mostDenied: top } = mostDenied(enforcer, {
      k: 10,
      nowMs: 2_000,
      hashKey: PUBLIC_HASH_KEY,
    });
    assert.equal(top.length, 1, `rows: ${top.map((r) => r.hash).join(", ")}`);
  });
});

describe("Secret", () => {
  it("reveal() hands out a copy: changing it changes nothing", () => {
    const secret = new Secret(new Uint8Array(32).fill(7));
    const bytes = secret.reveal();
    bytes.fill(0);
    assert.ok(secret.equals(new Secret(new Uint8Array(32).fill(7))));
    assert.deepEqual(secret.reveal(), new Uint8Array(32).fill(7));
  });
});
