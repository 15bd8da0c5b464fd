// Amplification towards members: with signing off anyone can write a member's
// or a seed's address into a datagram, and the fleet answers there. What
// forged joins, pings and requests to probe (ping-reqs) in an address's name
// make the fleet send it, beyond what it would have sent anyway, must stay
// within their bytes (joins) and `ANSWER_FACTOR` times their bytes (pings,
// ping-reqs, and news a member corrects).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Address, encode, type Message } from "../../src/core/membership/mod.ts";
import { ANSWER_FACTOR } from "../../src/core/membership/gate.ts";
import { MAX_INCARNATION } from "../../src/core/membership/table.ts";
import { Cluster } from "../../src/sim/faces/cluster.ts";
import { Fleet } from "../../src/sim/faces/fleet.ts";
import { Limit } from "../../src/core/limit.ts";
import { waitFor } from "../../src/sim/scenarios/report.ts";

/** Node 0 is every other node's seed; nodes 5 and 12 are members like any other. */
const SEED = 0;
const MEMBER = 5;
const OTHER_MEMBER = 12;
/** The member that forged requests in a victim's name ask to be probed, or ask as. */
const PROBED = 20;
const FORGED = 2_000;
const WINDOW_MS = 5_000;

/**
 * What is forged in the victim's name: a join, a ping, or a request to
 * probe it ("probe of", as if from member `PROBED`), one from it to probe
 * member `PROBED` ("probe for"), or one from it to probe itself ("probe of
 * itself"); or news that the member it goes to is suspect at the highest
 * incarnation ("suspicion"), which it refutes, telling the victim first;
 * or a stale suspicion of member `PROBED`, which refuted it long ago, on a
 * gossip ("stale suspicion") or a ping ("stale ping"): every member that
 * knows better corrects the victim (`MemberNews.correct`).
 */
type Kind =
  | "join"
  | "ping"
  | "probe of"
  | "probe for"
  | "probe of itself"
  | "suspicion"
  | "stale suspicion"
  | "stale ping";

const peer = (address: Address) => ({ id: address.id, address });
const as = (address: Address) => ({ ...peer(address), incarnation: 0 });

/** A forged datagram of `kind` naming node `victim`, for node `to`. */
function forged(kind: Kind, victim: number, seq: number, to: number): Uint8Array {
  const address = Cluster.addressOf(victim);
  const sender = as(kind === "probe of" ? Cluster.addressOf(PROBED) : address);
  const target = peer(kind === "probe for" ? Cluster.addressOf(PROBED) : address);
  const suspect = {
    ...peer(Cluster.addressOf(to)),
    incarnation: MAX_INCARNATION,
    from: address.id,
  };
  const stale = { state: "suspect", ...peer(Cluster.addressOf(PROBED)), incarnation: 0 } as const;
  const message: Message = kind === "join"
    ? { type: "join", page: 0, sender, records: [] }
    : kind === "ping"
    ? { type: "ping", seq, sender, records: [] }
    : kind === "suspicion"
    ? { type: "gossip", sender, records: [{ state: "suspect", ...suspect }] }
    : kind === "stale suspicion"
    ? { type: "gossip", sender, records: [{ ...stale, from: address.id }] }
    : kind === "stale ping"
    ? { type: "ping", seq, sender, records: [{ ...stale, from: address.id }] }
    : { type: "pingReq", seq, sender, target, records: [] };
  return encode(message);
}

/**
 * The most forged datagrams of `sentBytes` may get their victim: a page no
 * larger than its join, an ack at most `ANSWER_FACTOR` times its ping, and
 * a helper's ping, ack or nack at most `ANSWER_FACTOR` times the request.
 * (An instance answers an address in full once, when it opens to it; in
 * these settled fleets every instance did so long before the forgeries.)
 */
function bound(kind: Kind, sentBytes: number): number {
  return kind === "join" ? sentBytes : ANSWER_FACTOR * sentBytes;
}

/** `FORGED` datagrams of each attack, spread over every node but the one named. */
function sprayed(
  attacks: readonly { kind: Kind; victim: number }[],
  size: number,
  inject: (to: number, from: Address, bytes: Uint8Array) => void,
): number[] {
  return attacks.map(({ kind, victim }) => {
    let bytes = 0;
    for (let i = 0, to = 0; i < FORGED; i++, to = (to + 1) % size) {
      if (to === victim) to = (to + 1) % size;
      const datagram = forged(kind, victim, i, to);
      bytes += datagram.length;
      inject(to, Cluster.addressOf(victim), datagram);
    }
    return bytes;
  });
}

/** Prints what the victim got, the figure the README's Security section quotes. */
function report(fleet: string, kind: Kind, victim: number, sent: number, extra: number): void {
  const name = victim === SEED ? "the seed" : `member ${victim}`;
  const factor = `${(extra / sent).toFixed(2)}x`;
  console.log(`${fleet}: ${FORGED} forged ${kind} ${name}, ${sent} B: ${extra} B more, ${factor}`);
}

/**
 * Has member `PROBED` refute a suspicion (node 1 tells it it is suspect),
 * so that every member holds it at incarnation 1 and a suspicion at 0 is stale.
 */
function refuteProbed(inject: (to: number, from: Address, bytes: Uint8Array) => void): void {
  const one = Cluster.addressOf(1);
  const suspicion = {
    state: "suspect",
    ...peer(Cluster.addressOf(PROBED)),
    incarnation: 0,
    from: one.id,
  } as const;
  inject(PROBED, one, encode({ type: "gossip", sender: as(one), records: [suspicion] }));
}

function settledCluster(size: number): Cluster {
  const cluster = new Cluster({ seed: 31, size });
  assert.notEqual(waitFor(cluster, () => cluster.converged(), 20_000), undefined, "never formed");
  refuteProbed((to, from, bytes) => cluster.inject(to, from, bytes));
  cluster.runFor(3_000);
  cluster.resetTraffic();
  return cluster;
}

/**
 * Runs `attacks` (each on a victim of its own) against a settled cluster,
 * and the same cluster unattacked, and checks what each victim got beyond
 * the unattacked run against the bytes forged in its name.
 */
function checkCluster(size: number, attacks: readonly { kind: Kind; victim: number }[]): void {
  const [attacked, control] = [settledCluster(size), settledCluster(size)];
  const sent = sprayed(attacks, size, (to, from, bytes) => attacked.inject(to, from, bytes));
  for (const cluster of [attacked, control]) cluster.runFor(WINDOW_MS);
  attacks.forEach(({ kind, victim }, i) => {
    const address = Cluster.addressOf(victim);
    const extra = attacked.trafficTo(address).bytes - control.trafficTo(address).bytes;
    report(`${size} members`, kind, victim, sent[i], extra);
    assert.ok(
      extra <= bound(kind, sent[i]),
      `${FORGED} forged ${kind} datagrams naming node ${victim} of ${size}, ${sent[i]} bytes, ` +
        `got it ${extra} more bytes, ${(extra / sent[i]).toFixed(2)} times as many`,
    );
  });
  assert.ok(attacked.converged(), "the fleet stays whole");
  // Amid the same forgeries, a real newcomer joins through the seed.
  sprayed(attacks, size, (to, from, bytes) => attacked.inject(to, from, bytes));
  attacked.add({ seeds: [SEED] });
  assert.notEqual(
    waitFor(attacked, () => attacked.converged(), 10_000),
    undefined,
    "a newcomer joins",
  );
}

/** As `checkCluster`, in a fleet of `size` whose members all have demand to report. */
function checkFleet(size: number, attacks: readonly { kind: Kind; victim: number }[]): void {
  const settled = () => {
    const fleet = new Fleet({ seed: 5, size, limit: Limit.perSecond(1_000).burst(50) });
    for (let i = 0; i < size; i++) fleet.setDemand(i, 10 * (1 + (i % 3)));
    fleet.runUntil(7_000);
    refuteProbed((to, from, bytes) => fleet.inject(to, from, bytes));
    fleet.runUntil(10_000);
    return fleet;
  };
  const [attacked, control] = [settled(), settled()];
  const got = [new Map<number, number>(), new Map<number, number>()];
  const victims = attacks.map(({ victim }) => Cluster.addressOf(victim));
  [attacked, control].forEach((fleet, f) => {
    fleet.onSend = (_from, bytes, to) => {
      victims.forEach((victim, v) => {
        if (to.equals(victim)) got[f].set(v, (got[f].get(v) ?? 0) + bytes.length);
      });
    };
  });
  const sent = sprayed(attacks, size, (to, from, bytes) => {
    assert.equal(attacked.inject(to, from, bytes), "accepted");
  });
  for (const fleet of [attacked, control]) fleet.runUntil(10_000 + WINDOW_MS);
  attacks.forEach(({ kind, victim }, v) => {
    const extra = (got[0].get(v) ?? 0) - (got[1].get(v) ?? 0);
    report(`${size} members with demand`, kind, victim, sent[v], extra);
    assert.ok(
      extra <= bound(kind, sent[v]),
      `forged ${kind}s of ${sent[v]} bytes got ${extra} more bytes, ` +
        `${(extra / sent[v]).toFixed(2)} times as many`,
    );
  });
}

describe("no amplification towards members", () => {
  for (const size of [40, 200]) {
    it(`forged joins and pings naming a seed or a member of ${size} get it at most 1x and ${ANSWER_FACTOR}x`, () => {
      checkCluster(size, [{ kind: "join", victim: SEED }, { kind: "ping", victim: MEMBER }]);
      checkCluster(size, [{ kind: "ping", victim: SEED }, { kind: "join", victim: MEMBER }]);
    });

    it(`forged ping-reqs naming a seed or a member of ${size} get it at most ${ANSWER_FACTOR}x`, () => {
      checkCluster(size, [
        { kind: "probe for", victim: SEED },
        { kind: "probe of", victim: MEMBER },
        { kind: "probe of itself", victim: OTHER_MEMBER },
      ]);
      checkCluster(size, [
        { kind: "probe of", victim: SEED },
        { kind: "probe for", victim: MEMBER },
      ]);
    });
  }

  it(`forged suspicions at the highest incarnation, in a member's name, get it at most ${ANSWER_FACTOR}x`, () => {
    // Each member told it is suspect refutes, and tells whoever told it
    // first: at the highest incarnation, however often it is told.
    checkCluster(40, [{ kind: "suspicion", victim: MEMBER }]);
    checkFleet(40, [{ kind: "suspicion", victim: MEMBER }]);
  });

  it(`stale suspicions a member corrects, in a seed's or a member's name, get it at most ${ANSWER_FACTOR}x`, () => {
    // Every member holds member PROBED at a newer incarnation, and answers
    // each forged datagram with its record: on a gossip of its own, or on
    // the ack a ping gets anyway.
    checkCluster(40, [
      { kind: "stale suspicion", victim: SEED },
      { kind: "stale ping", victim: MEMBER },
    ]);
    checkFleet(40, [
      { kind: "stale suspicion", victim: MEMBER },
      { kind: "stale ping", victim: SEED },
    ]);
  });

  it(`with demand riding on acks, forged pings and joins get a member at most ${ANSWER_FACTOR}x and 1x`, () => {
    // Demand fills a fleet's acks: a bare forged ping got one of 1,143 bytes.
    checkFleet(40, [{ kind: "ping", victim: SEED }, { kind: "join", victim: MEMBER }]);
  });

  it(`with demand riding on pings, forged ping-reqs get a member at most ${ANSWER_FACTOR}x`, () => {
    // And a helper's pings: a bare forged request got the member it named
    // one of 1,150 bytes, and the one it named as asking an ack as large.
    checkFleet(40, [
      { kind: "probe for", victim: SEED },
      { kind: "probe of", victim: MEMBER },
      { kind: "probe of itself", victim: OTHER_MEMBER },
    ]);
  });
});
