import { it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Broadcasts } from "../../src/core/membership/broadcasts.ts";
import { Address, type MemberRecord, recordSize } from "../../src/proto/mod.ts";

/**
 * The queue's rules written the plain way, to check the real one against:
 * every queued record in one list, taken least sent first, in the order
 * each reached its count, each at most once a datagram.
 */
class Model {
  #queued: { key: string; record: MemberRecord; transmits: number; at: number }[] = [];
  #clock = 0;
  /** The smallest record ever queued: below it, nothing is looked at. */
  #least = Infinity;

  push(key: string, record: MemberRecord): void {
    this.#least = Math.min(this.#least, recordSize(record));
    this.#queued = this.#queued.filter((e) => e.key !== key);
    this.#queued.push({ key, record, transmits: 0, at: this.#clock++ });
  }

  take(budgetBytes: number, limit: number, skip?: string): MemberRecord[] {
    const least = this.#least;
    const order = [...this.#queued].sort((a, b) => a.transmits - b.transmits || a.at - b.at);
    const taken: MemberRecord[] = [];
    const sent: typeof order = [];
    for (const e of order) {
      if (budgetBytes < least) break;
      const size = recordSize(e.record);
      if (e.key === skip || size > budgetBytes) continue;
      budgetBytes -= size;
      taken.push(e.record);
      sent.push(e);
    }
    for (const e of sent) {
      e.transmits++;
      e.at = this.#clock++;
      if (e.transmits >= limit) this.#queued.splice(this.#queued.indexOf(e), 1);
    }
    return taken;
  }

  get size(): number {
    return this.#queued.length;
  }
}

const addresses = [
  ...Array.from({ length: 12 }, (_, i) => Address.parse(`10.0.0.${i + 1}:7946`)),
  Address.parse("[2001:db8::1]:7946"),
];

function record(member: number, suspect: boolean, incarnation: number): MemberRecord {
  const address = addresses[member];
  return suspect
    ? { state: "suspect", address, id: address.id, incarnation, from: addresses[0].id }
    : { state: "alive", address, id: address.id, incarnation };
}

it("Broadcasts takes what the plain rules say, in their order, over any pushes and takes", () => {
  const op = fc.oneof(
    fc.record({
      push: fc.nat(addresses.length - 1),
      suspect: fc.boolean(),
      incarnation: fc.nat(5),
    }),
    fc.record({
      take: fc.integer({ min: 0, max: 200 }),
      limit: fc.integer({ min: 1, max: 4 }),
      skip: fc.option(fc.nat(addresses.length - 1), { nil: undefined }),
    }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
      const real = new Broadcasts();
      const model = new Model();
      for (const o of ops) {
        if ("push" in o) {
          const key = addresses[o.push].toString();
          real.push(key, record(o.push, o.suspect, o.incarnation));
          model.push(key, record(o.push, o.suspect, o.incarnation));
        } else {
          const skip = o.skip === undefined ? undefined : addresses[o.skip].toString();
          assert.deepEqual(
            real.take(o.take, { limit: o.limit, skip: skip === undefined ? undefined : [skip] }),
            model.take(o.take, o.limit, skip),
          );
        }
        assert.equal(real.size, model.size);
      }
    }),
    { numRuns: 300 },
  );
});

it("Broadcasts holds a thousand members' news and sends each its number of times", () => {
  const real = new Broadcasts();
  const many = Array.from({ length: 1_000 }, (_, i) => {
    const address = Address.parse(`10.1.${i >> 8}.${i & 255}:7946`);
    return { key: address.toString(), address };
  });
  for (const m of many) {
    real.push(m.key, { state: "alive", address: m.address, id: m.address.id, incarnation: 0 });
  }
  const sent = new Map<string, number>();
  for (let datagram = 0; real.size > 0; datagram++) {
    assert.ok(datagram < 1_000, "drained");
    for (const r of real.take(240, { limit: 3 })) {
      const key = r.address.toString();
      sent.set(key, (sent.get(key) ?? 0) + 1);
    }
  }
  assert.equal(sent.size, 1_000);
  assert.ok([...sent.values()].every((n) => n === 3));
});
