import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Fleet, KEY } from "../../src/sim/faces/fleet.ts";
import { authConfig, GossipAuth, Secret } from "../../src/core/auth.ts";
import { Limit } from "../../src/core/limit.ts";
import { Address } from "../../src/proto/mod.ts";

const A = new Secret(new Uint8Array(32).fill(0xa));
const B = new Secret(new Uint8Array(32).fill(0xb));
const C = new Secret(new Uint8Array(32).fill(0xc));
const LIMIT = Limit.perSecond(1_000).burst(50);
const required = (...secrets: Secret[]) => authConfig(GossipAuth.Required, secrets);
const sizes = (f: Fleet, nodes: number[]) => nodes.map((i) => f.stats(i)!.clusterSize);

function loadedFleet(seed: number): Fleet {
  const f = new Fleet({ seed, size: 4, limit: LIMIT, auth: required(A) });
  for (let i = 0; i < 4; i++) f.setDemand(i, 400);
  f.runUntil(8_000);
  return f;
}

describe("signed gossip in the simulator", () => {
  it("under Required a stranger without the secret neither joins, nor moves a share, nor kills anyone", () => {
    const f = loadedFleet(1);
    const shares = [0, 1, 2, 3].map((i) => f.share(i, KEY));
    const stranger = f.add({ auth: authConfig(GossipAuth.Off) });
    f.setDemand(stranger, 5_000);
    f.runUntil(30_000);
    assert.equal(f.stats(stranger)!.clusterSize, 1, "nobody answered the stranger");
    assert.deepEqual(sizes(f, [0, 1, 2, 3]), [4, 4, 4, 4]);
    assert.ok(
      [0, 1, 2, 3].every((i) => f.stats(i)!.suspects === 0),
      "no member suspected, none dead",
    );
    [0, 1, 2, 3].forEach((i) =>
      assert.ok(Math.abs(f.share(i, KEY) - shares[i]) < 10, `share of ${i}`)
    );
    assert.ok(f.rejected(0).unsigned > 0, "its datagrams were counted as unsigned");
  });

  it("a node with the wrong secret hears nobody, and says so in badTag", () => {
    const f = loadedFleet(2);
    f.setAuth(3, required(C));
    f.runUntil(25_000);
    assert.equal(f.stats(3)!.clusterSize, 1, "it declared the others dead");
    assert.ok(f.rejected(3).badTag > 0, "its peers' datagrams were bad tags to it");
    assert.ok(f.rejected(0).badTag > 0, "and its to them");
    assert.deepEqual(sizes(f, [0, 1, 2]), [3, 3, 3]);
  });

  it("every step of turning signing on, rotating, and turning it off keeps the cluster whole", () => {
    const f = new Fleet({ seed: 3, size: 4, limit: LIMIT });
    f.runUntil(5_000);
    const steps = [
      authConfig(GossipAuth.Transitional, [A]),
      required(A),
      required(A, B),
      required(B, A),
      required(B),
      authConfig(GossipAuth.Transitional, [B]),
      authConfig(GossipAuth.Off),
    ];
    let t = 5_000;
    for (const step of steps) {
      for (let i = 0; i < 4; i++) {
        f.setAuth(i, step); // one node at a time, a second apart
        t += 1_000;
        f.runUntil(t);
        assert.deepEqual(sizes(f, [0, 1, 2, 3]), [4, 4, 4, 4], `${step.mode} on node ${i}`);
        assert.ok(
          [0, 1, 2, 3].every((n) => f.stats(n)!.suspects === 0),
          `${step.mode} on node ${i}: no suspicion`,
        );
      }
    }
  });

  it("Required straight to Off splits the cluster, as documented", () => {
    const f = loadedFleet(4);
    f.setAuth(0, authConfig(GossipAuth.Off));
    f.runUntil(25_000);
    assert.deepEqual(sizes(f, [1, 2, 3]), [3, 3, 3], "the others drop the unsigned node");
    assert.ok(f.rejected(1).unsigned > 0);
  });
});

describe("fuzzing a node with random and mutated datagrams", () => {
  it("nothing throws, each is counted under one reason, and the shares do not move", () => {
    const f = loadedFleet(5);
    const captured: Uint8Array[] = [];
    f.onSend = (_from, bytes) => captured.length < 200 && captured.push(bytes.slice());
    f.runUntil(11_000);
    f.onSend = undefined;
    assert.ok(captured.length >= 50, `${captured.length} captured`);
    const before = f.share(0, KEY);
    const stranger = Address.parse("10.9.9.9:7946");
    const peer = Address.parse("10.0.0.2:7946");
    let injected = 0;
    const malformedBefore = f.stats(0)!.malformed;
    const rejectedBefore = f.rejected(0);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 1_400 }),
          fc.tuple(fc.nat(captured.length - 1), fc.nat(), fc.integer({ min: 1, max: 255 })).map(
            ([i, at, x]) => {
              const m = captured[i].slice();
              m[at % m.length] ^= x; // a real capture with one byte changed
              return m;
            },
          ),
        ),
        fc.boolean(),
        (bytes, fromPeer) => {
          const outcome = f.inject(0, fromPeer ? peer : stranger, bytes);
          assert.notEqual(outcome, "accepted", "under Required nothing forged gets in");
          injected++;
        },
      ),
      { numRuns: 500 },
    );
    const r = f.rejected(0);
    const malformed = f.stats(0)!.malformed - malformedBefore;
    assert.equal(
      r.unsigned - rejectedBefore.unsigned + r.badTag - rejectedBefore.badTag + malformed,
      injected,
      "each datagram counted once",
    );
    f.runUntil(12_000);
    assert.ok(Math.abs(f.share(0, KEY) - before) < 10, `share ${before} → ${f.share(0, KEY)}`);
  });
});
