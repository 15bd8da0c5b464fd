import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  demandIn,
  HeardReports,
  RELAY_FRESH_PERIODS,
  REPORT_BELIEVED_PERIODS,
} from "../../src/core/allocation/heard.ts";
import { CountedMembers } from "../../src/core/allocation/members.ts";
import { type DemandGroup, encodeReports, GroupReader } from "../../src/core/allocation/report.ts";
import { PartitionPolicy } from "../../src/core/partition.ts";
import { Prng } from "../../src/core/prng.ts";
import { Address, MemberId } from "../../src/proto/mod.ts";

const PERIOD_MS = 200;
const BELIEVED_MS = REPORT_BELIEVED_PERIODS * PERIOD_MS;
const peer = Address.parse("10.0.0.2:7946");
/** A member other than `peer`, to relay to. */
const ANOTHER = new MemberId(0, 1);

function members(state: "alive" | "suspect" | "dead", life: number): CountedMembers {
  const m = new CountedMembers(PartitionPolicy.holdDown());
  const member = { id: peer.id, address: peer, state, incarnation: 0, life };
  m.apply({ member, previous: undefined, nowMs: 0 });
  return m;
}

const group = (life: number, round: number, demand: number, ageMs = 0): DemandGroup => ({
  origin: peer.id,
  life,
  round,
  ageMs,
  records: [{ hash: { hi: 0, lo: 1 }, demand }],
});
/** A reader at `g`, as a node holds one for a group it hears. */
function at(g: DemandGroup): GroupReader {
  const reader = new GroupReader(encodeReports([g]));
  reader.next();
  return reader;
}
const demandOf = (heard: HeardReports) => [...heard.entries()][0]?.[1].demands[0]?.demand;

describe("the reports a node holds of its peers", () => {
  it("takes reports only of a live member, of the life membership names", () => {
    assert.equal(
      new HeardReports(members("dead", 7), PERIOD_MS).take(at(group(7, 1, 5)), 0),
      undefined,
    );
    const heard = new HeardReports(members("suspect", 7), PERIOD_MS);
    assert.equal(heard.take(at(group(8, 1, 5)), 0), undefined, "another life");
    const stranger = { ...group(7, 1, 5), origin: { hi: 0, lo: 1 } };
    assert.equal(heard.take(at(stranger), 0), undefined, "a stranger");
    assert.ok(heard.take(at(group(7, 1, 5)), 0));
  });

  it("within a life, a later round replaces an earlier one, and a replay changes nothing", () => {
    const heard = new HeardReports(members("alive", 7), PERIOD_MS);
    heard.take(at(group(7, 10, 5)), 0);
    assert.equal(heard.take(at(group(7, 9, 50)), 100), undefined, "an earlier round");
    assert.equal(heard.take(at(group(7, 10, 50)), 100), undefined, "the same round again");
    heard.take(at(group(7, 11, 6)), 200);
    assert.equal(demandOf(heard), 6);
  });

  it("believes a report at the highest round only for its believed time, and never again", () => {
    const heard = new HeardReports(members("alive", 7), PERIOD_MS);
    heard.take(at(group(7, 0xffff_ffff, 1e9, 100)), 0);
    assert.equal(heard.take(at(group(7, 40, 5)), BELIEVED_MS - 200), undefined, "still believed");
    assert.ok(
      heard.take(at(group(7, 41, 5)), BELIEVED_MS - 99),
      "past it, a real one replaces it",
    );
    assert.equal(demandOf(heard), 5);
    assert.equal(
      heard.take(at(group(7, 0xffff_ffff, 1e9, 100)), BELIEVED_MS),
      undefined,
      "a copy of it that comes late is not taken again",
    );
    assert.equal(
      heard.take(at(group(7, 0xffff_ffff, 1e9, BELIEVED_MS + 1)), BELIEVED_MS),
      undefined,
      "and one older than that is not taken at all",
    );
  });

  it("counts a key named twice in a group once, at its last figure", () => {
    const heard = new HeardReports(members("alive", 7), PERIOD_MS);
    const twice = (round: number, a: number, b: number): DemandGroup => ({
      ...group(7, round, 0),
      records: [{ hash: { hi: 0, lo: 1 }, demand: a }, { hash: { hi: 0, lo: 1 }, demand: b }],
    });
    const view = members("alive", 7).view(0);
    heard.take(at(twice(1, 5, 8)), 0);
    assert.equal(heard.demandOf(1, view, 0).others, 8);
    heard.take(at(twice(2, 3, 4)), 10);
    assert.equal(heard.demandOf(1, view, 10).others, 4);
    heard.take(at(group(7, 3, 6)), 20);
    assert.equal(heard.demandOf(1, view, 20).others, 6);
  });

  it("relays what is fresh, older by the time it was held, and not to its origin", () => {
    const heard = new HeardReports(members("alive", 7), PERIOD_MS);
    heard.take(at(group(7, 3, 5, 40)), 1_000);
    const [relayed] = heard.relayed(1_100, ANOTHER, 1_000);
    assert.equal(relayed.ageMs, 140);
    assert.equal(heard.relayed(1_000, ANOTHER, 1_000)[0].ageMs, 41, "a ms at least");
    assert.deepEqual(heard.relayed(1_100, peer.id, 1_000), [], "not back to its origin");
    assert.deepEqual(heard.relayed(1_100, ANOTHER, 10), [], "within the budget");
    const staleMs = 1_000 + RELAY_FRESH_PERIODS * PERIOD_MS - 40 + 1;
    assert.deepEqual(heard.relayed(staleMs, ANOTHER, 1_000), [], "not once stale");
  });
});

describe("the relay of a node with many peers", () => {
  it("passes on the next origins in turn, not mostly the same ones again", () => {
    const m = new CountedMembers(PartitionPolicy.holdDown());
    const heard = new HeardReports(m, PERIOD_MS);
    const peers = Array.from({ length: 100 }, (_, i) => Address.parse(`10.0.2.${i + 1}:7946`));
    for (const address of peers) {
      const member = { id: address.id, address, state: "alive", incarnation: 0, life: 1 } as const;
      m.apply({ member, previous: undefined, nowMs: 0 });
      heard.take(at({ ...group(1, 1, 5), origin: address.id }), 0);
    }
    // Room for 10 groups of one record each (34 bytes), and some to spare.
    const budgetBytes = 10 * 34 + 25;
    const sent: string[][] = [];
    for (let call = 0; call < 10; call++) {
      const groups = heard.relayed(100, ANOTHER, budgetBytes);
      assert.equal(groups.length, 10);
      sent.push(groups.map((g) => g.bytes.join()));
    }
    const distinct = new Set(sent.flat());
    assert.equal(distinct.size, 100, "ten calls of ten pass on each of the hundred once");
  });
});

describe("reports of origins whose IDs share a low half", () => {
  it("are held apart, and each is replaced by its own later rounds", () => {
    const m = new CountedMembers(PartitionPolicy.holdDown());
    const heard = new HeardReports(m, PERIOD_MS);
    // Both halves high too: the low half is a negative int32 as a Map key.
    const ids = [new MemberId(1, 0xffff_fff5), new MemberId(0xffff_fff2, 0xffff_fff5)];
    for (const id of ids) {
      m.apply({
        member: { id, address: peer, state: "alive", incarnation: 0, life: 1 },
        previous: undefined,
        nowMs: 0,
      });
    }
    const report = (id: MemberId, round: number, demand: number) =>
      at({ ...group(1, round, demand), origin: id });
    const held = () => new Map([...heard.entries()].map(([k, o]) => [k, demandIn(o, 1)]));
    assert.ok(heard.take(report(ids[0], 1, 10), 0));
    assert.ok(heard.take(report(ids[1], 1, 20), 0));
    assert.equal(heard.take(report(ids[1], 1, 30), 10), undefined, "a copy of the second's");
    assert.ok(heard.take(report(ids[1], 2, 40), 20));
    assert.ok(heard.take(report(ids[0], 2, 50), 30));
    assert.deepEqual(held(), new Map([[ids[0].toString(), 50], [ids[1].toString(), 40]]));
    heard.forget(ids[0].toString());
    assert.equal(
      heard.take(report(ids[1], 2, 60), 40),
      undefined,
      "still held once the other goes",
    );
    assert.ok(heard.take(report(ids[1], 3, 70), 50));
    assert.deepEqual(held(), new Map([[ids[1].toString(), 70]]));
    assert.equal(heard.demandOf(1, m.view(50), 50).others, 70);
  });
});

describe("the summed demand of the counted peers", () => {
  it("equals the sum over the reports of the members the view counts, as peers come, change and go", () => {
    const policies = [
      PartitionPolicy.holdDown(),
      PartitionPolicy.optimistic(),
      PartitionPolicy.quorum(),
    ];
    const states = ["alive", "suspect", "dead", "left", "forgotten"] as const;
    for (const policy of policies) {
      const m = new CountedMembers(policy);
      const heard = new HeardReports(m, PERIOD_MS);
      const peers = Array.from({ length: 12 }, (_, i) => Address.parse(`10.0.1.${i + 1}:7946`));
      // The core's generator: the low bits of a linear congruential one
      // repeat within a few draws (and x * 1103515245 is past 2^53 here).
      const prng = new Prng(7);
      const next = (n: number) => prng.below(n);
      const round = new Map<number, number>();
      for (let step = 0; step < 2_000; step++) {
        const nowMs = step * 10;
        const i = next(peers.length);
        const address = peers[i];
        if (next(3) === 0) {
          const state = states[next(states.length)];
          m.apply({
            member: { id: address.id, address, state, incarnation: 0, life: 1 },
            previous: undefined,
            nowMs,
          });
          if (state === "left" || state === "forgotten") heard.forget(address.id.toString());
        } else {
          round.set(i, (round.get(i) ?? 0) + 1);
          const records = [{ hash: { hi: 0, lo: 1 }, demand: next(1_000) / 8 }];
          if (next(2) === 0) records.push({ hash: { hi: 0, lo: 2 }, demand: next(100) });
          heard.take(
            at({ origin: address.id, life: 1, round: round.get(i)!, ageMs: 0, records }),
            nowMs,
          );
        }
        const view = m.view(nowMs);
        for (const id of [1, 2]) {
          let others = 0;
          let reports = 0;
          for (const [k, o] of heard.entries()) {
            const d = demandIn(o, id);
            if (d === undefined || !view.counts(k)) continue;
            others += d;
            reports++;
          }
          // This node's own demand as a function of time, linear between the
          // breaks (newest first), and the time the key turned hot here: the
          // walk the held reports' times are summed for.
          const breaksMs = [nowMs - 40, nowMs - 400, nowMs - 1_000, -Infinity];
          const ownAt = (ms: number) =>
            ms >= breaksMs[0]
              ? 3 + ms / 7
              : ms >= breaksMs[1]
              ? 50 - ms / 3
              : ms >= breaksMs[2]
              ? 2 * ms
              : 11;
          const settledMs = 10 * next(step + 1);
          const sinceMs = Math.max(nowMs - REPORT_BELIEVED_PERIODS * PERIOD_MS, settledMs);
          let ownSum = 0, ownN = 0, unknown = 0, held = 0;
          for (const [k, o] of heard.entries()) {
            if (!view.counts(k) && m.peer(k)?.state !== "alive") continue;
            held++;
            const made = o.receivedMs - o.ageMs;
            if (demandIn(o, id) !== undefined) {
              ownSum += ownAt(made);
              ownN++;
            } else if (made < sinceMs) unknown++;
          }
          const got = heard.demandOf(id, view, nowMs, { settledMs, ownAt, breaksMs });
          assert.ok(Math.abs(got.others - others) < 1e-9, `${policy}: ${got.others} vs ${others}`);
          if (reports === 0 || others <= 0) continue;
          const own = ownN > 0 ? ownSum / ownN : undefined;
          assert.ok(
            own === undefined ? got.own === undefined : Math.abs(got.own! - own) < 1e-6,
            `${policy}, step ${step}: own ${got.own} vs ${own}`,
          );
          assert.equal(got.known, held - unknown, `${policy}, step ${step}: known`);
          assert.equal(got.unknown, held - unknown > 0 ? unknown : 0, `${policy}: unknown`);
        }
      }
    }
  });
});
