import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  decode,
  encode,
  MAX_MESSAGE_BYTES,
  MemberId,
  Node,
} from "../../src/core/membership/mod.ts";
import { addr, drain, gossip, prove, record, sender, sent, suspect } from "./helpers.ts";

/** A join as a joiner sends it: padded to pay for the page it asks for. */
function paddedJoin(from: number, page: number): Uint8Array {
  const bare = encode({ type: "join", page, sender: sender(from), records: [] });
  const padding = MAX_MESSAGE_BYTES - bare.length - 3;
  return encode({ type: "join", page, sender: sender(from), records: [], padding });
}

/** Node 1, which already knows nodes 2 to `upTo`, each proven to receive at its address. */
function nodeKnowing(upTo: number, options = {}): Node {
  const node = new Node(addr(1), { seed: 1, ...options });
  const records = [];
  for (let i = 3; i <= upTo; i++) records.push(record(i, "alive"));
  for (let i = 0; i === 0 || i < records.length; i += 50) {
    node.handleDatagram(0, addr(2), gossip(2, records.slice(i, i + 50)));
  }
  for (let i = 2; i <= upTo; i++) prove(node, i);
  return node;
}

describe("Node", () => {
  it("answers a probe with an ack of the same sequence number, and learns the prober", () => {
    const node = new Node(addr(1), { seed: 1 });
    // A bare ping from a member of this release, which sends its life, pays for a bare ack.
    node.handleDatagram(
      0,
      addr(2),
      encode({ type: "ping", seq: 9, sender: { ...sender(2), life: 7 }, records: [] }),
    );
    const [reply] = sent(node);
    assert.equal(reply.to, "10.0.0.2:7946");
    assert.equal(reply.message.type, "ack");
    assert.equal("seq" in reply.message && reply.message.seq, 9);
    assert.equal(node.stats(0).clusterSize, 2);
  });

  it("refuses as malformed a datagram whose sender goes by another address's ID", () => {
    const node = new Node(addr(1), { seed: 1 });
    const forged = { ...sender(2), id: addr(3).id };
    node.handleDatagram(0, addr(2), encode({ type: "ping", seq: 1, sender: forged, records: [] }));
    node.handleDatagram(0, addr(2), new Uint8Array([1, 0, 77]));
    assert.deepEqual(sent(node), []);
    assert.equal(node.stats(0).malformed, 2);
    assert.equal(node.members().length, 0);
  });

  it("drops a record under a mismatched ID alone, and takes the rest", () => {
    const node = new Node(addr(1), { seed: 1 });
    const forged = { ...record(3, "alive"), id: new MemberId(1, 2) };
    node.handleDatagram(0, addr(2), gossip(2, [forged, record(4, "alive")]));
    assert.equal(node.stats(0).mismatchedRecords, 1);
    assert.deepEqual(node.members().map((m) => m.address.toString()).sort(), [
      "10.0.0.2:7946",
      "10.0.0.4:7946",
    ]);
  });

  it("refutes a suspicion of itself with a higher incarnation, told at once", () => {
    const node = nodeKnowing(5);
    node.handleDatagram(10, addr(2), gossip(2, [suspect(1, 2, 0)]));
    assert.equal(node.incarnation, 1);
    const out = sent(node);
    assert.ok(out.some((s) => s.to === "10.0.0.2:7946" && s.message.sender.incarnation === 1));
    assert.ok(out.length >= 2, "the refutation also goes to members at random");
    assert.equal(node.stats(10).identityConflicts, 0);
  });

  it("outbids someone else's alive record of itself, and counts the conflict", () => {
    const node = nodeKnowing(3);
    node.handleDatagram(10, addr(2), gossip(2, [record(1, "alive", 5)]));
    assert.equal(node.incarnation, 6);
    node.handleDatagram(20, addr(2), gossip(2, [record(1, "alive", 6)]));
    assert.equal(node.incarnation, 6, "its own record coming back is no conflict");
    assert.equal(node.stats(20).identityConflicts, 1);
  });

  it("refuses newcomers beyond maxMembers, and says it is full for tombstoneMs", () => {
    const node = new Node(addr(1), { seed: 1, maxMembers: 3 });
    node.handleDatagram(0, addr(2), gossip(2, [3, 4, 5, 6].map((i) => record(i, "alive"))));
    const stats = node.stats(0);
    assert.equal(node.members().length + 1, 3);
    assert.equal(stats.membersRefused, 3);
    assert.equal(stats.membersFull, true);
    assert.equal(node.stats(600_001).membersFull, false);
  });

  it("throws RangeError naming an option out of range", () => {
    const cases: [object, RegExp][] = [
      [{ maxMembers: 0 }, /maxMembers/],
      [{ maxMembers: 65_537 }, /maxMembers/],
      [{ protocolPeriodMs: 0 }, /protocolPeriodMs/],
      [{ probeTimeoutMs: 200 }, /probeTimeoutMs/],
      [{ suspicionMinMs: 5_000, suspicionMaxMs: 1_000 }, /suspicionMaxMs/],
      [{ indirectProbes: 1.5 }, /indirectProbes/],
    ];
    for (const [options, name] of cases) {
      assert.throws(
        () => new Node(addr(1), { seed: 1, ...options }),
        (e: unknown) => e instanceof RangeError && name.test(String(e)),
      );
    }
  });

  it("is due at once before its first timeout, and ignores a spurious one", () => {
    const node = new Node(addr(1), { seed: 1, seeds: [addr(2).toString()] });
    assert.equal(node.pollTimeout(), 0);
    node.handleTimeout(0);
    assert.deepEqual(sent(node).map((s) => [s.to, s.message.type]), [["10.0.0.2:7946", "join"]]);
    assert.equal(node.pollTimeout(), 200);
    node.handleTimeout(150);
    assert.deepEqual(sent(node), []);
    node.handleTimeout(200);
    assert.equal(sent(node)[0]?.message.type, "join", "alone, it tries its seeds again");
  });

  it("probes, asks three helpers and tries again when unanswered, then suspects", () => {
    const node = nodeKnowing(6);
    node.handleTimeout(1_000);
    const [probe] = sent(node);
    assert.equal(probe.message.type, "ping");
    node.handleTimeout(1_100);
    const indirect = sent(node);
    assert.equal(indirect.filter((s) => s.message.type === "pingReq").length, 3);
    assert.ok(indirect.some((s) => s.message.type === "ping" && s.to === probe.to));
    assert.ok(indirect.every((s) => s.message.type !== "pingReq" || s.to !== probe.to));
    node.handleTimeout(1_200);
    const target = node.members().find((m) => m.address.toString() === probe.to);
    assert.equal(target?.state, "suspect");
    assert.equal(node.stats(1_200).suspects, 1);
    assert.ok(node.stats(1_200).awareness > 0, "unanswered helpers count against itself");
  });

  it("takes a relayed ack as the end of its probe", () => {
    const node = nodeKnowing(6);
    node.handleTimeout(1_000);
    const [probe] = sent(node);
    node.handleTimeout(1_100);
    const helper = sent(node).find((s) => s.message.type === "pingReq")!;
    const seq = "seq" in probe.message ? probe.message.seq : -1;
    const helperIndex = Number(helper.to.split(".")[3].split(":")[0]);
    node.handleDatagram(
      1_150,
      addr(helperIndex),
      encode({ type: "ack", seq, sender: sender(helperIndex), records: [] }),
    );
    node.handleTimeout(1_200);
    assert.equal(node.stats(1_200).suspects, 0);
  });

  it("relays a ping-req: pings the target, passes its ack on, or sends a nack", () => {
    const node = nodeKnowing(4);
    const target = { id: addr(3).id, address: addr(3) };
    node.handleDatagram(
      0,
      addr(2),
      encode({ type: "pingReq", seq: 77, target, sender: sender(2), records: [] }),
    );
    const [ping] = sent(node);
    assert.equal(ping.to, "10.0.0.3:7946");
    const seq = "seq" in ping.message ? ping.message.seq : -1;
    node.handleDatagram(5, addr(3), encode({ type: "ack", seq, sender: sender(3), records: [] }));
    const [relayed] = sent(node);
    assert.deepEqual([relayed.to, relayed.message.type], ["10.0.0.2:7946", "ack"]);
    assert.equal("seq" in relayed.message && relayed.message.seq, 77);
    node.handleDatagram(
      10,
      addr(2),
      encode({ type: "pingReq", seq: 78, target, sender: sender(2), records: [] }),
    );
    sent(node);
    node.handleTimeout(200);
    const nack = sent(node).find((s) => s.message.type === "nack");
    assert.equal(nack?.to, "10.0.0.2:7946");
  });

  it("answers each join with one page of its membership, all pages covering it", () => {
    const node = nodeKnowing(150);
    const told = new Set<string>();
    let pages = 1;
    for (let page = 0; page < pages; page++) {
      const join = paddedJoin(200, page);
      node.handleDatagram(0, addr(200), join);
      const out = drain(node);
      const bytes = out.reduce((sum, t) => sum + t.bytes.length, 0);
      assert.ok(bytes <= join.length, `${bytes} bytes answered a join of ${join.length}`);
      const replies = out.map((t) => decode(t.bytes)).filter((d) =>
        d.ok && d.value.type === "state"
      );
      assert.equal(replies.length, 1, "one page per request");
      const message = replies[0].ok ? replies[0].value : undefined;
      assert.ok(message);
      assert.ok(message.type === "state" && message.page === page);
      pages = message.pages;
      for (const r of message.records) told.add(r.address.toString());
    }
    assert.ok(pages >= 2);
    for (let i = 2; i <= 150; i++) assert.ok(told.has(`10.0.0.${i}:7946`), `member ${i}`);
  });

  it("asks for the next page once, again after a period without it, and stops at the last", () => {
    const node = nodeKnowing(3);
    const state = (page: number) =>
      encode({ type: "state", page, pages: 3, sender: sender(2), records: [] });
    node.handleDatagram(10, addr(2), state(0));
    node.handleDatagram(11, addr(2), state(0));
    const asks = sent(node).filter((s) => s.message.type === "join");
    assert.deepEqual(asks.map((s) => s.message.type === "join" && s.message.page), [1]);
    node.handleTimeout(300);
    const again = sent(node).filter((s) => s.message.type === "join");
    assert.deepEqual(again.map((s) => s.message.type === "join" && s.message.page), [1]);
    node.handleDatagram(320, addr(2), state(1));
    node.handleDatagram(330, addr(2), state(2));
    const last = sent(node).filter((s) => s.message.type === "join");
    assert.deepEqual(last.map((s) => s.message.type === "join" && s.message.page), [2]);
    node.handleTimeout(1_000);
    assert.ok(sent(node).every((s) => s.message.type !== "join"), "the transfer is over");
  });

  it("leaves by telling every live member, then stops", () => {
    const node = nodeKnowing(4);
    node.leave();
    const out = sent(node);
    assert.deepEqual(out.map((s) => s.to).sort(), [
      "10.0.0.2:7946",
      "10.0.0.3:7946",
      "10.0.0.4:7946",
    ]);
    for (const { message } of out) assert.equal(message.records[0]?.state, "left");
    assert.equal(node.pollTimeout(), undefined);
    node.handleDatagram(
      200,
      addr(2),
      encode({ type: "ping", seq: 1, sender: sender(2), records: [] }),
    );
    assert.deepEqual(sent(node), []);
    assert.equal(node.stats(200).left, true);
  });

  it("tells a member it believes dead so, and takes its refutation", () => {
    const node = nodeKnowing(4);
    node.handleDatagram(0, addr(2), gossip(2, [record(3, "dead", 0)]));
    sent(node);
    // Death took its proof away; its ping, news and all, pays for the answer.
    const news = [record(2, "alive"), record(4, "alive")];
    node.handleDatagram(
      10,
      addr(3),
      encode({ type: "ping", seq: 5, sender: sender(3, 0), records: news }),
    );
    const [ack] = sent(node);
    assert.deepEqual(ack.message.records[0], record(3, "dead", 0));
    node.handleDatagram(20, addr(3), gossip(3, [], 1));
    assert.equal(node.members().find((m) => m.address.equals(addr(3)))?.state, "alive");
  });

  it("a process started again at its address outbids its earlier life, even at once", () => {
    // Two real nodes, then node 2 replaced by a new process at its address
    // within the same millisecond: same incarnation 0, another life.
    const a = new Node(addr(1), { seed: 1 });
    const first = new Node(addr(2), { seed: 2, seeds: [a.address.toString()] });
    run([a, first], 0, 2_000);
    const known = () => a.members().find((m) => m.address.equals(addr(2)))!;
    assert.deepEqual([known().incarnation, known().life], [0, first.life]);
    const second = new Node(addr(2), { seed: 3, seeds: [a.address.toString()] });
    assert.notEqual(second.life, first.life, "a new seed, a new life");
    run([a, second], 2_000, 2_400);
    assert.ok(second.incarnation > 0, "the new life refuted the old one's record");
    assert.deepEqual([known().incarnation, known().life], [second.incarnation, second.life]);
    assert.equal(second.stats(2_400).identityConflicts, 1);
  });

  it("at the highest incarnation, where nobody can outbid, a member's own word wins", () => {
    const node = nodeKnowing(3);
    const max = 0xffff_ffff;
    const at = (life: number, from: number) => ({ ...sender(from, max), life });
    node.handleDatagram(0, addr(2), encode({ type: "gossip", sender: at(7, 2), records: [] }));
    // A rumour of another life at the same incarnation, told by node 3: kept out.
    const rumour = { ...record(2, "alive", max), life: 8 };
    node.handleDatagram(
      1,
      addr(3),
      encode({ type: "gossip", sender: sender(3), records: [rumour] }),
    );
    const life = () => node.members().find((m) => m.address.equals(addr(2)))!.life;
    assert.equal(life(), 7);
    // Node 2 itself, as sender, in its new life: taken.
    node.handleDatagram(2, addr(2), encode({ type: "gossip", sender: at(9, 2), records: [] }));
    assert.equal(life(), 9);
  });
});

/** Delivers every datagram among `nodes` at once, a millisecond at a time, over [fromMs, toMs). */
function run(nodes: Node[], fromMs: number, toMs: number): void {
  for (let nowMs = fromMs; nowMs < toMs; nowMs++) {
    for (const node of nodes) {
      if ((node.pollTimeout() ?? Infinity) <= nowMs) node.handleTimeout(nowMs);
      for (let t = node.pollTransmit(); t; t = node.pollTransmit()) {
        nodes.find((n) => n.address.equals(t.to))?.handleDatagram(nowMs, node.address, t.bytes);
      }
    }
  }
}
