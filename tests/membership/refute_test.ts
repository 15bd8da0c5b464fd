// How a refutation reaches a node that missed it: its own look at the
// suspect before the suspicion runs out, a helper's answer carrying the
// target's record, and a correction from a member that knew better.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encode, type Message, Node } from "../../src/core/membership/mod.ts";
import { resolveConfig, suspicionBoundsMs } from "../../src/core/membership/config.ts";
import { addr, drain, gossip, prove, record, sender, sent, suspect } from "./helpers.ts";

/** Node 1, which knows nodes 2 to `upTo`, each proven. */
function nodeKnowing(upTo: number, seed = 1): Node {
  const node = new Node(addr(1), { seed });
  const records = [];
  for (let i = 3; i <= upTo; i++) records.push(record(i, "alive"));
  for (let i = 0; i < records.length; i += 50) {
    node.handleDatagram(0, addr(2), gossip(2, records.slice(i, i + 50)));
  }
  for (let i = 2; i <= upTo; i++) prove(node, i);
  return node;
}

const seqOf = (message: Message) => ("seq" in message ? message.seq : -1);
const recordsOf = (message: Message) =>
  message.records.map((r) => [r.address.toString(), r.state, r.incarnation]);

describe("a refutation this node missed", () => {
  it("comes back in the ack of its own look at the suspect, before the suspicion runs out", () => {
    // 200 members: a round of probes (40 s) is longer than the suspicion
    // (13.8 s), which would run out before the round-robin came to it.
    // On this seed the round-robin does not come to member 3 before the suspicion runs out.
    const node = nodeKnowing(201, 2);
    node.handleDatagram(0, addr(2), gossip(2, [suspect(3, 2)]));
    const { maxMs } = suspicionBoundsMs(resolveConfig({}), 201);
    const pingsTo3: number[] = [];
    let firstLook: ReturnType<typeof recordsOf> = [];
    for (let nowMs = 0; nowMs < maxMs + 1_000; nowMs += 10) {
      if ((node.pollTimeout() ?? Infinity) <= nowMs) node.handleTimeout(nowMs);
      for (const { to, message } of sent(node)) {
        if (message.type !== "ping") continue;
        const who = Number(to.split(":")[0].split(".")[3]);
        // Member 3 refutes as soon as a ping tells it it is suspect; every member answers.
        const told = message.records.some((r) =>
          r.address.equals(addr(3)) && r.state === "suspect"
        );
        if (who === 3 && pingsTo3.length === 0) firstLook = recordsOf(message);
        if (who === 3) pingsTo3.push(nowMs);
        const incarnation = who === 3 && (told || pingsTo3.length > 0) ? 1 : 0;
        const ack = encode({
          type: "ack",
          seq: message.seq,
          sender: sender(who, incarnation),
          records: [],
        });
        node.handleDatagram(nowMs + 2, addr(who), ack);
      }
    }
    assert.ok(pingsTo3.length > 0, "node 1 never pinged the suspect");
    assert.deepEqual(
      firstLook,
      [["10.0.0.3:7946", "suspect", 0]],
      "the look carries no other news",
    );
    assert.ok(
      pingsTo3[0] >= maxMs - 400,
      `it pinged it at ${pingsTo3[0]} ms, not in the last two periods`,
    );
    const three = node.members().find((m) => m.address.equals(addr(3)));
    assert.deepEqual([three?.state, three?.incarnation], ["alive", 1]);
    assert.equal(node.stats(maxMs).suspectLooks, 1, "the look is counted, once");
  });

  it("is not looked for at a suspicion another member has confirmed", () => {
    // The same node and seed as above, but a second member confirms the
    // suspicion: that member failed to reach the suspect too, which a lone
    // missed refutation does not explain, and looks at such suspicions kept
    // a healed region's members suspect (region-cut-optimistic-200).
    const node = nodeKnowing(201, 2);
    node.handleDatagram(0, addr(2), gossip(2, [suspect(3, 2)]));
    node.handleDatagram(1, addr(4), gossip(4, [suspect(3, 4)]));
    const { maxMs } = suspicionBoundsMs(resolveConfig({}), 201);
    const pingsTo3: number[] = [];
    for (let nowMs = 0; nowMs < maxMs; nowMs += 10) {
      if ((node.pollTimeout() ?? Infinity) <= nowMs) node.handleTimeout(nowMs);
      for (const { to, message } of sent(node)) {
        if (message.type !== "ping") continue;
        const who = Number(to.split(":")[0].split(".")[3]);
        if (who === 3) pingsTo3.push(nowMs);
        const ack = encode({ type: "ack", seq: message.seq, sender: sender(who, 0), records: [] });
        node.handleDatagram(nowMs + 2, addr(who), ack);
      }
    }
    assert.deepEqual(pingsTo3, [], "node 1 looked at a confirmed suspicion");
    assert.equal(node.stats(maxMs).suspectLooks, 0);
  });

  it("rides first on a helper's ack and nack to the requester, from incarnation 1 on", () => {
    const node = nodeKnowing(4);
    const target = { id: addr(3).id, address: addr(3) };
    const request = (seq: number) =>
      encode({ type: "pingReq", seq, target, sender: sender(2), records: [] });
    node.handleDatagram(0, addr(2), request(77));
    const [ping] = sent(node);
    // The target's ack says it is at incarnation 4: the requester may hold an older suspicion.
    node.handleDatagram(
      5,
      addr(3),
      encode({ type: "ack", seq: seqOf(ping.message), sender: sender(3, 4), records: [] }),
    );
    const [ack] = sent(node);
    assert.equal(ack.message.type, "ack");
    assert.deepEqual(recordsOf(ack.message)[0], ["10.0.0.3:7946", "alive", 4]);
    node.handleDatagram(10, addr(2), request(78));
    sent(node);
    node.handleTimeout(200);
    const nack = sent(node).find((s) => s.message.type === "nack")!;
    assert.deepEqual(recordsOf(nack.message)[0], ["10.0.0.3:7946", "alive", 4]);
  });

  it("goes to a member that spreads the suspicion it refuted, once a second has passed", () => {
    const node = nodeKnowing(5);
    node.handleDatagram(0, addr(3), gossip(3, [], 2));
    sent(node);
    // At first, a sender behind is likely still in the refutation's wave: no correction.
    node.handleDatagram(500, addr(4), gossip(4, [suspect(3, 4, 1)]));
    assert.deepEqual(sent(node).filter((s) => s.to === "10.0.0.4:7946"), []);
    assert.equal(node.stats(500).corrections, 0);
    node.handleDatagram(1_500, addr(4), gossip(4, [suspect(3, 4, 1)]));
    const told = sent(node).filter((s) => s.to === "10.0.0.4:7946");
    assert.equal(told.length, 1);
    assert.deepEqual(recordsOf(told[0].message)[0], ["10.0.0.3:7946", "alive", 2]);
    assert.equal(node.stats(1_500).corrections, 1);
  });

  it("rides on the ack of a ping that carried the stale suspicion, in no datagram of its own", () => {
    const node = nodeKnowing(5);
    node.handleDatagram(0, addr(3), gossip(3, [], 2));
    sent(node);
    const ping = encode({ type: "ping", seq: 9, sender: sender(4), records: [suspect(3, 4, 1)] });
    node.handleDatagram(1_500, addr(4), ping);
    const told = sent(node).filter((s) => s.to === "10.0.0.4:7946");
    assert.deepEqual(told.map((s) => [s.message.type, seqOf(s.message)]), [["ack", 9]]);
    assert.deepEqual(recordsOf(told[0].message)[0], ["10.0.0.3:7946", "alive", 2]);
    assert.equal(node.stats(1_500).corrections, 1);
  });

  it("goes to a member proven in at most twice the bytes of the datagram it answers, past the first", () => {
    // Anyone can write a member's address as a sender: a correction is an
    // answer like an ack (`gate.ts`), whatever news waits to ride along.
    const node = nodeKnowing(5);
    node.handleDatagram(0, addr(3), gossip(3, [], 2));
    // News of 40 newcomers waits, enough to fill a datagram.
    const newcomers = [];
    for (let i = 10; i < 50; i++) newcomers.push(record(i, "alive"));
    node.handleDatagram(1, addr(5), gossip(5, newcomers));
    sent(node);
    const stale = gossip(4, [suspect(3, 4, 1)]);
    const sizes: number[] = [];
    for (let i = 0; i < 3; i++) {
      node.handleDatagram(1_500 + i, addr(4), stale);
      for (const s of drain(node)) {
        if (s.to.toString() === "10.0.0.4:7946") sizes.push(s.bytes.length);
      }
    }
    assert.equal(sizes.length, 3);
    assert.ok(sizes[0] > 2 * stale.length, `the first answer goes in full: ${sizes[0]} bytes`);
    for (const size of sizes.slice(1)) {
      assert.ok(size <= 2 * stale.length, `${size} bytes for a datagram of ${stale.length}`);
    }
    assert.equal(node.stats(1_600).corrections, 3);
  });

  it("to a stranger, goes within the bytes sent in its name", () => {
    const node = nodeKnowing(5);
    node.handleDatagram(0, addr(3), gossip(3, [], 2));
    sent(node);
    let received = 0, answered = 0;
    for (let i = 0; i < 10; i++) {
      const stale = i % 2 === 0
        ? gossip(99, [suspect(3, 99, 1)])
        : encode({ type: "ping", seq: i, sender: sender(99), records: [suspect(3, 99, 1)] });
      received += stale.length;
      node.handleDatagram(1_500 + i, addr(99), stale);
      for (const s of drain(node)) {
        if (s.to.toString() === "10.0.0.99:7946") answered += s.bytes.length;
      }
    }
    assert.ok(answered > 0, "it was corrected");
    assert.ok(answered <= received, `${answered} bytes sent for ${received} received`);
  });
});
