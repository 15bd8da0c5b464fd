// Reflection: a stranger writes someone else's address into datagrams; the
// fleet must not send that address more bytes than were sent in its name.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Address, encode, type Message } from "../../src/core/membership/mod.ts";
import { Cluster } from "../../src/sim/faces/cluster.ts";
import { Fleet } from "../../src/sim/faces/fleet.ts";
import { Limit } from "../../src/core/limit.ts";
import { authConfig, GossipAuth, Secret } from "../../src/core/auth.ts";
import { waitFor } from "../../src/sim/scenarios/report.ts";
import { detect } from "../../src/sim/scenarios/named.ts";

const VICTIM = Address.parse("192.0.2.7:7946");
const ATTACKER = Address.parse("198.51.100.9:7946");
const peer = (address: Address) => ({ id: address.id, address });
const as = (address: Address, incarnation = 0) => ({ ...peer(address), incarnation });

function settledCluster(seed: number, size: number): Cluster {
  const cluster = new Cluster({ seed, size });
  assert.notEqual(waitFor(cluster, () => cluster.converged(), 20_000), undefined, "never formed");
  cluster.runFor(5_000);
  cluster.resetTraffic();
  return cluster;
}

/** Hands each datagram to node `i` in turn; returns the bytes handed over. */
function spray(cluster: Cluster, from: Address, messages: Message[]): number {
  let bytes = 0;
  messages.forEach((message, i) => {
    const datagram = encode(message);
    bytes += datagram.length;
    cluster.inject(i % cluster.size, from, datagram);
  });
  return bytes;
}

/** Runs 20 s, then checks the stranger got at most `spoofedBytes`, and the fleet stayed whole. */
function gotAtMost(cluster: Cluster, spoofedBytes: number): void {
  cluster.runFor(20_000);
  const reflected = cluster.trafficTo(VICTIM);
  assert.ok(
    reflected.bytes <= spoofedBytes,
    `the stranger got ${reflected.datagrams} datagrams, ${reflected.bytes} bytes, for ${spoofedBytes}`,
  );
  assert.ok(cluster.converged());
}

function withheld(cluster: Cluster): { datagrams: number; bytes: number } {
  let datagrams = 0, bytes = 0;
  for (let i = 0; i < cluster.size; i++) {
    const stats = cluster.node(i)!.stats(cluster.nowMs);
    datagrams += stats.withheldDatagrams;
    bytes += stats.withheldBytes;
  }
  return { datagrams, bytes };
}

describe("no reflection", () => {
  for (const padding of [0, 1_300]) {
    it(`five spoofed joins naming a stranger (${padding} bytes of padding) get it no more than that`, () => {
      const cluster = settledCluster(11, 5);
      const joins: Message[] = [];
      for (let i = 0; i < 5; i++) {
        joins.push({ type: "join", page: 0, sender: as(VICTIM), records: [], padding });
      }
      const spoofedBytes = spray(cluster, VICTIM, joins);
      cluster.runFor(20_000);
      const reflected = cluster.trafficTo(VICTIM);
      assert.ok(
        reflected.bytes <= spoofedBytes,
        `the fleet sent the stranger ${reflected.datagrams} datagrams, ${reflected.bytes} bytes, ` +
          `${
            (reflected.bytes / spoofedBytes).toFixed(1)
          } times the ${spoofedBytes} sent in its name`,
      );
      assert.ok(withheld(cluster).datagrams > 0, "what was held back is counted");
      assert.ok(cluster.converged(), "the fleet forgets the stranger, and stays whole");
    });
  }

  it("news of a stranger, or a request to probe it, gets it nothing", () => {
    const cluster = settledCluster(12, 5);
    const rumour: Message[] = [];
    for (let i = 0; i < 5; i++) {
      rumour.push({
        type: "gossip",
        sender: as(ATTACKER),
        records: [{ state: "alive", ...as(VICTIM, i) }],
      });
      rumour.push({
        type: "pingReq",
        seq: i,
        target: peer(VICTIM),
        sender: as(ATTACKER),
        records: [],
      });
    }
    spray(cluster, ATTACKER, rumour);
    cluster.runFor(20_000);
    const reflected = cluster.trafficTo(VICTIM);
    assert.equal(reflected.bytes, 0, `the stranger got ${reflected.datagrams} datagrams`);
    assert.ok(cluster.converged());
  });

  it("requests to probe members, in a stranger's name, get it no more than they took", () => {
    // A helper's ping names whom it probes for, and the target challenges
    // that member on the ping's bytes: named unproven, the stranger would get
    // the helper's answer and the target's challenge for one forged request.
    const cluster = settledCluster(13, 5);
    const requests: Message[] = [];
    for (let i = 0; i < 10; i++) {
      const target = Cluster.addressOf((i + 1) % cluster.size);
      requests.push({
        type: "pingReq",
        seq: i,
        target: peer(target),
        sender: as(VICTIM),
        records: [],
      });
    }
    const spoofedBytes = spray(cluster, VICTIM, requests);
    gotAtMost(cluster, spoofedBytes);
  });

  it("stale suspicions in a stranger's name, which every member corrects, get it no more than they took", () => {
    // Member 3 refuted a suspicion long ago; a forger sends every member a
    // suspicion of it at the old incarnation, as the stranger. Each member
    // answers a sender behind with the newer record (`MemberNews.correction`),
    // on a gossip of its own or on the ack of a ping: unproven, the
    // stranger gets only what fits in the bytes sent in its name.
    const cluster = settledCluster(14, 5);
    const one = Cluster.addressOf(1), three = Cluster.addressOf(3);
    const suspicion = (by: Address) => ({ state: "suspect", ...as(three), from: by.id }) as const;
    cluster.inject(3, one, encode({ type: "gossip", sender: as(one), records: [suspicion(one)] }));
    cluster.runFor(5_000);
    for (let i = 0; i < cluster.size; i++) {
      const held = cluster.node(i)!.members().find((m) => m.address.equals(three));
      assert.ok(i === 3 || held?.incarnation === 1, `node ${i} holds member 3 refuted`);
    }
    cluster.resetTraffic();
    const stale: Message[] = [];
    for (let i = 0; i < 40; i++) {
      const records = [suspicion(VICTIM)];
      stale.push(
        i % 2 === 0
          ? { type: "gossip", sender: as(VICTIM), records }
          : { type: "ping", seq: i, sender: as(VICTIM), records },
      );
    }
    const before = cluster.node(0)!.stats(cluster.nowMs).corrections;
    const spoofedBytes = spray(cluster, VICTIM, stale);
    assert.ok(cluster.node(0)!.stats(cluster.nowMs).corrections > before, "node 0 corrected");
    gotAtMost(cluster, spoofedBytes);
  });
});

describe("a real cluster under the gate", () => {
  it("forms, withholds nothing once settled, and detects a crash", () => {
    const cluster = new Cluster({ seed: 21, size: 30 });
    assert.notEqual(waitFor(cluster, () => cluster.converged(), 5_000), undefined, "formed");
    cluster.runFor(10_000);
    const before = withheld(cluster);
    cluster.runFor(20_000);
    assert.deepEqual(
      withheld(cluster),
      before,
      "settled, every member has proven itself to every other",
    );
    assert.ok(cluster.converged());
    const { allMs } = detect(cluster, 29, 10_000);
    assert.ok(allMs <= 7_000, `the crash was seen by all after ${allMs} ms`);
  });
});

describe("no reflection in a fleet", () => {
  for (const mode of [GossipAuth.Off, GossipAuth.Transitional]) {
    it(`demand reports riding along, signing ${mode}: the stranger gets at most what was sent`, () => {
      const auth = mode === GossipAuth.Off
        ? authConfig(mode)
        : authConfig(mode, [new Secret(new Uint8Array(32).fill(7))]);
      const fleet = new Fleet({ seed: 5, size: 5, limit: Limit.perSecond(1_000).burst(50), auth });
      for (let i = 0; i < 5; i++) fleet.setDemand(i, 400);
      fleet.runUntil(10_000);
      let reflected = 0;
      fleet.onSend = (_from, bytes, to) => {
        if (to.equals(VICTIM)) reflected += bytes.length;
      };
      let spoofed = 0;
      for (let i = 0; i < 5; i++) {
        const join = encode({ type: "join", page: 0, sender: as(VICTIM), records: [] });
        spoofed += join.length;
        assert.equal(fleet.inject(i, VICTIM, join), "accepted");
      }
      fleet.runUntil(30_000);
      // Signed answers carry a 16-byte tag the core does not count: at most one per datagram.
      const tags = mode === GossipAuth.Off ? 0 : 16 * 5;
      assert.ok(reflected <= spoofed + tags, `${reflected} bytes reflected for ${spoofed}`);
      const stats = [0, 1, 2, 3, 4].map((i) => fleet.stats(i)!);
      assert.ok(stats.every((s) => s.clusterSize === 5), "the stranger is gone, the fleet whole");
    });
  }
});
