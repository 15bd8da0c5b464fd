// The reflection gate, by hand: what a node sends an address that has not
// shown it receives there, and how such an address proves itself.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  decode,
  encode,
  MAX_MESSAGE_BYTES,
  type Message,
  Node,
} from "../../src/core/membership/mod.ts";
import { ANSWER_FACTOR, Gate, MAX_UNPROVEN } from "../../src/core/membership/gate.ts";
import { addr, drain, gossip, prove, record, sender, sent } from "./helpers.ts";

const seqOf = (m: Message) => ("seq" in m ? m.seq : -1);
/** The `i` of `10.0.0.i:7946`. */
const indexOf = (to: string) => Number(to.split(".")[3].split(":")[0]);
/** A member of this release: every datagram it sends carries its life. */
const member = (i: number, life = 1_000 + i) => ({ ...sender(i), life });
const ping = (from: number, seq: number, life?: number) =>
  encode({ type: "ping", seq, sender: member(from, life), records: [] });
const ack = (from: number, seq: number, life?: number) =>
  encode({ type: "ack", seq, sender: member(from, life), records: [] });

/** Node 1 with members 2 to 5, proven. */
function withMembers(): Node {
  const node = new Node(addr(1), { seed: 1 });
  node.handleDatagram(0, addr(2), gossip(2, [3, 4, 5].map((i) => record(i, "alive"))));
  for (let i = 2; i <= 5; i++) prove(node, i);
  drain(node);
  return node;
}

/**
 * The proven members answer the node's pings, so that they stay alive; with
 * `nack`, the helpers asked say they could not reach the target.
 */
function answer(
  node: Node,
  nowMs: number,
  out: { to: string; message: Message }[],
  options = { nack: false },
): void {
  for (const { to, message } of out) {
    const from = indexOf(to);
    if (message.type === "ping") node.handleDatagram(nowMs, addr(from), ack(from, seqOf(message)));
    if (options.nack && message.type === "pingReq") {
      const nack = { type: "nack", seq: message.seq, sender: member(from), records: [] } as const;
      node.handleDatagram(nowMs, addr(from), encode(nack));
    }
  }
  drain(node);
}

/** Bytes of everything the node has to send `to`. */
function bytesTo(node: Node, to: number): number {
  return drain(node).filter((t) => t.to.equals(addr(to))).reduce((n, t) => n + t.bytes.length, 0);
}

describe("the reflection gate", () => {
  it("answers an unpadded join from a stranger with nothing, and counts what it withheld", () => {
    const node = withMembers();
    node.handleDatagram(
      0,
      addr(200),
      encode({ type: "join", page: 0, sender: sender(200), records: [] }),
    );
    assert.deepEqual(sent(node), []);
    const stats = node.stats(0);
    assert.equal(stats.withheldDatagrams, 1);
    assert.ok(stats.withheldBytes > 24, "the page it would have sent");
  });

  it("a joiner pads its join to pay for the page; its ack of the ping that follows opens it", () => {
    const joiner = new Node(addr(200), { seed: 2, seeds: [addr(1).toString()] });
    joiner.handleTimeout(0);
    const [join] = drain(joiner);
    assert.equal(join.bytes.length, MAX_MESSAGE_BYTES, "joins to a seed are padded in full");
    const node = withMembers();
    node.handleDatagram(0, addr(200), join.bytes);
    const reply = sent(node);
    assert.deepEqual(reply.map((s) => s.message.type), ["state", "ping"]);
    // Before the proof, a bare ping gets a bare ack; after it, news rides along.
    node.handleDatagram(1, addr(200), ping(200, 7, joiner.life));
    assert.equal(sent(node)[0].message.records.length, 0);
    node.handleDatagram(2, addr(200), ack(200, seqOf(reply[1].message), joiner.life));
    node.handleDatagram(3, addr(200), ping(200, 8, joiner.life));
    assert.ok(sent(node)[0].message.records.length > 0, "a proven address hears the news");
  });

  it("probes a member heard of by rumour through proven helpers; their ack leads to the proof", () => {
    const node = withMembers();
    node.handleDatagram(0, addr(2), gossip(2, [record(9, "alive")]));
    drain(node);
    let asked: { to: string; message: Message }[] = [];
    for (let nowMs = 1_000; asked.length === 0 && nowMs < 60_000; nowMs += 200) {
      node.handleTimeout(nowMs);
      const out = sent(node);
      assert.ok(out.every((s) => s.to !== "10.0.0.9:7946"), "nothing goes to it directly");
      answer(node, nowMs, out);
      asked = out.filter((s) => s.message.type === "pingReq");
    }
    assert.ok(asked.length > 0, "it asked helpers about member 9");
    const helper = indexOf(asked[0].to);
    node.handleDatagram(70_000, addr(helper), ack(helper, seqOf(asked[0].message)));
    const [challenge] = sent(node);
    assert.deepEqual([challenge.to, challenge.message.type], ["10.0.0.9:7946", "ping"]);
    node.handleDatagram(70_001, addr(9), ack(9, seqOf(challenge.message)));
    node.handleDatagram(70_002, addr(9), ping(9, 3));
    assert.ok(sent(node)[0].message.records.length > 0, "member 9 is proven");
  });

  it("a helper's ping names whom it probes for", () => {
    const node = withMembers();
    const target = { id: addr(3).id, address: addr(3) };
    node.handleDatagram(
      0,
      addr(2),
      encode({ type: "pingReq", seq: 5, target, sender: member(2), records: [] }),
    );
    const [relayed] = sent(node);
    assert.equal(relayed.to, addr(3).toString());
    assert.ok(relayed.message.type === "ping");
    assert.ok(relayed.message.requester?.address.equals(addr(2)), "it names member 2");
    assert.ok(relayed.message.requester?.id.equals(addr(2).id));
  });

  it("a target challenges the member a helper probes for, in the bytes the ping brought", () => {
    const node = withMembers();
    const forRequester = (
      requester: { id: ReturnType<typeof addr>["id"]; address: ReturnType<typeof addr> },
    ) => encode({ type: "ping", seq: 11, sender: member(2), records: [], requester, padding: 40 });
    const bytes = forRequester({ id: addr(9).id, address: addr(9) });
    node.handleDatagram(0, addr(2), bytes);
    const out = sent(node);
    assert.deepEqual(out.map((s) => [indexOf(s.to), s.message.type]), [[2, "ack"], [9, "ping"]]);
    const challenge = out[1].message;
    assert.ok(challenge.records.length <= 1, "lean: at most what it believes of member 9");
    const sentTo9 = encode(challenge).length;
    assert.ok(
      sentTo9 <= bytes.length,
      `${sentTo9} bytes to member 9 for a ping of ${bytes.length}`,
    );
    // Its ack proves member 9 here: news rides along from then on.
    node.handleDatagram(1, addr(9), ack(9, seqOf(challenge)));
    node.handleDatagram(2, addr(9), ping(9, 3));
    assert.ok(sent(node)[0].message.records.length > 0, "member 9 is proven");
    // A requester whose ID is not its address's is counted, not challenged.
    const mismatched = node.stats(3).mismatchedRecords;
    node.handleDatagram(3, addr(2), forRequester({ id: addr(8).id, address: addr(10) }));
    assert.deepEqual(sent(node).map((s) => indexOf(s.to)), [2]);
    assert.equal(node.stats(3).mismatchedRecords, mismatched + 1);
  });

  it("suspects a member nobody could reach only once it is past suspicionMaxMs", () => {
    const node = withMembers();
    node.handleDatagram(1_000, addr(2), gossip(2, [record(9, "alive")]));
    drain(node);
    const stateOf9 = () => node.members().find((m) => m.address.equals(addr(9)))?.state;
    let suspectedAtMs: number | undefined;
    for (let nowMs = 1_000; nowMs < 12_000 && suspectedAtMs === undefined; nowMs += 100) {
      node.handleTimeout(nowMs);
      answer(node, nowMs, sent(node), { nack: true });
      if (stateOf9() !== "alive") suspectedAtMs = nowMs;
    }
    assert.ok(suspectedAtMs !== undefined, "a stranger is suspected in the end");
    assert.ok(
      suspectedAtMs - 1_000 >= 6_000,
      `suspected ${suspectedAtMs - 1_000} ms after it was heard of`,
    );
  });

  it("leaves its health score alone when a probe through helpers alone fails", () => {
    // Member 9 is only heard of: its probes go through helpers, which here
    // neither reach it nor nack. Four datagrams must all arrive for such a
    // probe to succeed, so on a lossy network it fails however healthy this
    // node is; counted against it, as a failed direct probe is, every node of
    // a large fleet under 30% loss had its probes slowed ninefold.
    const node = withMembers();
    node.handleDatagram(1_000, addr(2), gossip(2, [record(9, "alive")]));
    drain(node);
    let probedNine = 0;
    let highest = 0;
    for (let nowMs = 1_000; nowMs < 12_000; nowMs += 100) {
      node.handleTimeout(nowMs);
      const out = sent(node);
      if (
        out.some((s) => s.message.type === "pingReq" && s.message.target.address.equals(addr(9)))
      ) {
        probedNine++;
      }
      answer(node, nowMs, out);
      highest = Math.max(highest, node.stats(nowMs).awareness);
    }
    assert.ok(probedNine >= 3, `member 9 was probed ${probedNine} times`);
    assert.equal(highest, 0);
  });

  it("takes no forged ack as proof, whatever sequence number the forger saw last", () => {
    const node = withMembers();
    // The forger learns a sequence number: it asks the node to probe its own address.
    const target = (i: number) => ({ id: addr(i).id, address: addr(i) });
    const ask = (i: number) =>
      encode({ type: "pingReq", seq: 0, target: target(i), sender: sender(66), records: [] });
    node.handleDatagram(0, addr(66), ask(66));
    const seen = seqOf(sent(node).find((s) => s.to === "10.0.0.66:7946")!.message);
    // Then pays for a ping to the victim in its name, and has the node ping it.
    const paid = gossip(99, [], 0);
    node.handleDatagram(1, addr(99), paid);
    node.handleDatagram(2, addr(66), ask(99));
    let spent = bytesTo(node, 99);
    let received = paid.length;
    for (let guess = seen - 8; guess <= seen + 8; guess++) {
      const forged = ack(99, guess >>> 0);
      received += forged.length;
      node.handleDatagram(3, addr(99), forged);
    }
    for (let i = 0; i < 20; i++) {
      const poke = ping(99, i);
      received += poke.length;
      node.handleDatagram(4 + i, addr(99), poke);
      spent += bytesTo(node, 99);
    }
    assert.ok(spent <= received, `${spent} bytes to the victim for ${received} in its name`);
  });

  it("a helper's ping and the ack it passes back take at most twice the request; one to probe its asker gets nothing", () => {
    // A request to probe names two addresses, the asker's and the target's,
    // and either may be forged: each gets no more than twice its bytes.
    const node = new Node(addr(1), { seed: 1 });
    const news = Array.from({ length: 60 }, (_, i) => record(i + 3, "alive"));
    node.handleDatagram(0, addr(2), gossip(2, news));
    for (let i = 2; i <= 5; i++) prove(node, i);
    drain(node);
    const target = { id: addr(3).id, address: addr(3) };
    const request = (seq: number, padding?: number, to = target) =>
      encode({ type: "pingReq", seq, target: to, sender: member(2), records: [], padding });
    const bare = request(7);
    node.handleDatagram(10, addr(2), bare);
    const [relayed] = drain(node);
    assert.ok(relayed?.to.equals(addr(3)), "the helper pings the target");
    assert.ok(
      relayed.bytes.length <= ANSWER_FACTOR * bare.length,
      `a ping of ${relayed.bytes.length} bytes for a request of ${bare.length}`,
    );
    const probe = decode(relayed.bytes);
    assert.ok(probe.ok && probe.value.type === "ping");
    node.handleDatagram(11, addr(3), ack(3, probe.value.seq));
    const answers = drain(node).filter((t) => t.to.equals(addr(2)));
    assert.deepEqual(answers.map((t) => decode(t.bytes)).map((d) => d.ok && seqOf(d.value)), [7]);
    assert.ok(
      answers[0].bytes.length <= ANSWER_FACTOR * bare.length,
      `an ack of ${answers[0].bytes.length} bytes passed back for a request of ${bare.length}`,
    );
    // A requester pads its request to half a datagram: the helper's news goes in full.
    const padded = request(8, Math.ceil(MAX_MESSAGE_BYTES / ANSWER_FACTOR) - bare.length - 3);
    node.handleDatagram(12, addr(2), padded);
    const full = bytesTo(node, 3);
    assert.ok(
      full > ANSWER_FACTOR * bare.length && full <= ANSWER_FACTOR * padded.length,
      `a ping of ${full} bytes for a padded request of ${padded.length}`,
    );
    const withheld = node.stats(13).withheldDatagrams;
    node.handleDatagram(13, addr(2), request(9, undefined, { id: addr(2).id, address: addr(2) }));
    assert.equal(bytesTo(node, 2), 0, "a request to probe its asker gets it nothing");
    assert.equal(node.stats(13).withheldDatagrams, withheld + 1, "and is counted");
  });

  it("answers a proven member or a seed no more than twice what asked, but once; a join no more than it", () => {
    // Anyone can write a member's address into a datagram: being proven
    // opens an address to news, not to answers larger than their question.
    const node = new Node(addr(1), { seed: 1, seeds: [addr(6).toString()] });
    node.handleDatagram(0, addr(2), gossip(2, [3, 4, 5, 6, 7, 8].map((i) => record(i, "alive"))));
    for (let i = 2; i <= 5; i++) prove(node, i);
    drain(node);
    for (const named of [2, 6]) {
      // The first answer goes in full: it is what a member that has not
      // proven this node yet lacks. The rest are cut to what paid for them.
      node.handleDatagram(10, addr(named), ping(named, 40));
      assert.ok(bytesTo(node, named) > 0, "a ping is answered");
      for (const [i, asked] of [ping(named, 41), ping(named, 42)].entries()) {
        node.handleDatagram(11 + i, addr(named), asked);
        const answer = bytesTo(node, named);
        assert.ok(answer > 0, "a ping is answered");
        assert.ok(
          answer <= ANSWER_FACTOR * asked.length,
          `${answer} bytes to ${named} for a ping of ${asked.length}`,
        );
      }
      const withheld = node.stats(20).withheldDatagrams;
      const join = encode({ type: "join", page: 0, sender: member(named), records: [] });
      node.handleDatagram(20, addr(named), join);
      assert.equal(bytesTo(node, named), 0, "an unpadded join gets no page");
      assert.equal(node.stats(20).withheldDatagrams, withheld + 1, "and the page is counted");
      const padded = encode({
        type: "join",
        page: 0,
        sender: member(named),
        records: [],
        padding: MAX_MESSAGE_BYTES - join.length - 3,
      });
      node.handleDatagram(21, addr(named), padded);
      const page = bytesTo(node, named);
      assert.ok(
        page > 0 && page <= padded.length,
        `a page of ${page} for a join of ${padded.length}`,
      );
    }
  });

  it("keeps its tables bounded, dropping the oldest", () => {
    const gate = new Gate(4);
    for (let i = 0; i < MAX_UNPROVEN + 10; i++) gate.credit(`k${i}`, 100);
    assert.equal(gate.room("k0"), 0, "the oldest credit went first");
    assert.equal(gate.room(`k${MAX_UNPROVEN + 9}`), 100);
    for (let i = 0; i < 6; i++) {
      gate.challenge(i, `p${i}`, 0);
      gate.acked(i, `p${i}`);
    }
    assert.equal(gate.isProven("p0"), false);
    assert.equal(gate.isProven("p5"), true);
    gate.forget("p5");
    assert.equal(gate.room("p5"), 0, "forgotten, it proves itself anew");
  });
});
