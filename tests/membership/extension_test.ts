import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Address,
  decode,
  encode,
  encodedSize,
  MAX_MESSAGE_BYTES,
  type MemberChange,
  Node,
} from "../../src/core/membership/mod.ts";
import { message } from "../proto/arbitraries.ts";
import { addr, drain } from "./helpers.ts";

/** Runs `nodes` on a perfect network in 10 ms steps until `untilMs`. */
function run(nodes: Node[], untilMs: number): void {
  for (let nowMs = 0; nowMs <= untilMs; nowMs += 10) {
    for (const node of nodes) {
      if ((node.pollTimeout() ?? Infinity) <= nowMs) node.handleTimeout(nowMs);
      for (const t of drain(node)) {
        nodes.find((n) => n.address.equals(t.to))?.handleDatagram(nowMs, node.address, t.bytes);
      }
    }
  }
}

describe("the extension seam", () => {
  it("carries the layer above's bytes on probes and acks, and tells it of members", () => {
    const heard: string[] = [];
    const changes: MemberChange[] = [];
    const a = new Node(addr(1), {
      seed: 1,
      extension: { outgoing: (_now, to) => new TextEncoder().encode(`demand for ${to.address}`) },
    });
    const b = new Node(addr(2), {
      seed: 2,
      seeds: [a.address.toString()],
      extension: {
        incoming: (_now, from, bytes) =>
          heard.push(`${from.address}: ${new TextDecoder().decode(bytes)}`),
        memberChanged: (change) => changes.push(change),
      },
    });
    run([a, b], 1_000);
    assert.ok(heard.includes("10.0.0.1:7946: demand for 10.0.0.2:7946"));
    assert.deepEqual(
      changes.map((c) => [c.member.address.toString(), c.previous, c.member.state]),
      [
        ["10.0.0.1:7946", undefined, "alive"],
      ],
    );
  });

  it("carries them on a nack of an indirect probe too, after the records; never to a stranger", () => {
    // A helper asked by a seed to probe a member it cannot reach: its nack
    // to the seed carries the demand (a forming fleet sends most of its
    // datagrams to proven members as such requests and nacks).
    const helper = new Node(addr(1), {
      seed: 1,
      seeds: [addr(2).toString()],
      extension: { outgoing: () => new TextEncoder().encode("demand") },
    });
    helper.handleTimeout(0);
    drain(helper);
    const request = (from: Address, seq: number) => {
      const sender = { address: from, id: from.id, incarnation: 0 };
      const target = { id: addr(3).id, address: addr(3) };
      helper.handleDatagram(
        10,
        from,
        encode({ type: "pingReq", seq, sender, records: [], target }),
      );
    };
    request(addr(2), 7);
    const stranger = Address.parse("192.0.2.9:7946");
    request(stranger, 8);
    drain(helper);
    helper.handleTimeout(1_000);
    const nacks = drain(helper).flatMap((t) => {
      const m = decode(t.bytes);
      return m.ok && m.value.type === "nack" ? [{ to: t.to.toString(), m: m.value }] : [];
    });
    const toSeed = nacks.find((n) => n.to === addr(2).toString());
    assert.ok(toSeed, "the seed gets its nack");
    assert.equal(new TextDecoder().decode(toSeed.m.extension), "demand");
    for (const n of nacks.filter((n) => n.to === stranger.toString())) {
      assert.equal(n.m.extension, undefined, "a stranger's nack is lean");
    }
  });

  it("leaves room for membership: an extension asking for too much is left out", () => {
    const greedy = new Node(addr(1), {
      seed: 1,
      extension: { outgoing: () => new Uint8Array(1_400) },
    });
    const peer = new Node(addr(2), { seed: 2, seeds: [greedy.address.toString()] });
    run([greedy, peer], 1_000);
    assert.equal(peer.stats(1_000).clusterSize, 2);
    const sender = { address: addr(2), id: addr(2).id, incarnation: 0 };
    greedy.handleDatagram(1_000, addr(2), encode({ type: "ping", seq: 1, sender, records: [] }));
    const [ack] = drain(greedy).map((t) => decode(t.bytes));
    assert.ok(ack.ok && ack.value.type === "ack" && ack.value.extension === undefined);
  });
});

describe("joining", () => {
  it("a newcomer learns a membership of many pages, page after page, within a period", () => {
    const seed = new Node(addr(1), { seed: 1 });
    const sender = { address: addr(9), id: addr(9).id, incarnation: 0 };
    for (let i = 0; i < 10; i++) {
      const records = Array.from({ length: 50 }, (_, j) => {
        const address = Address.of(new Uint8Array([10, 2, i, j]), 7946);
        return { state: "alive" as const, address, id: address.id, incarnation: 0 };
      });
      seed.handleDatagram(0, addr(9), encode({ type: "gossip", sender, records }));
    }
    drain(seed);
    const newcomer = new Node(Address.parse("[2001:db8::7]:7946"), {
      seed: 2,
      seeds: [seed.address.toString()],
    });
    run([seed, newcomer], 190);
    assert.equal(newcomer.members().filter((m) => m.state === "alive").length, 502);
    assert.equal(seed.members().find((m) => m.address.family === 6)?.state, "alive");
  });
});

describe("datagram size", () => {
  it("every datagram a node sends fits in 1400 bytes once signed, whatever it hears", () => {
    const input = fc.oneof(
      message.filter((m) => encodedSize(m) <= MAX_MESSAGE_BYTES).map((m) => ({
        kind: "datagram" as const,
        m,
      })),
      fc.nat({ max: 3_000 }).map((ms) => ({ kind: "time" as const, ms })),
    );
    fc.assert(
      fc.property(fc.array(input, { maxLength: 40 }), fc.nat({ max: 2_000 }), (inputs, extra) => {
        const node = new Node(addr(1), {
          seed: 3,
          seeds: [addr(2).toString()],
          extension: {
            outgoing: (_now, _to, maxBytes) => new Uint8Array(Math.min(extra, maxBytes)),
          },
        });
        // Enough members that a full state spans several datagrams.
        for (let i = 0; i < 6; i++) {
          const records = Array.from({ length: 50 }, (_, j) => {
            const address = Address.of(new Uint8Array([10, 1, i, j]), 7946);
            return { state: "alive" as const, address, id: address.id, incarnation: 0 };
          });
          const sender = { address: addr(2), id: addr(2).id, incarnation: 0 };
          node.handleDatagram(0, addr(2), encode({ type: "gossip", sender, records }));
        }
        let nowMs = 0;
        for (const step of inputs) {
          if (step.kind === "time") node.handleTimeout(nowMs += step.ms);
          else node.handleDatagram(nowMs, step.m.sender.address, encode(step.m));
          for (const t of drain(node)) {
            assert.ok(t.bytes.length <= MAX_MESSAGE_BYTES, `${t.bytes.length} bytes`);
            assert.ok(decode(t.bytes).ok);
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});
