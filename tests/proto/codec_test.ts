import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Address,
  decode,
  encode,
  encodedSize,
  MAX_DATAGRAM_BYTES,
  MAX_MESSAGE_BYTES,
  type Message,
  prepareSigned,
  splitSigned,
  TAG_BYTES,
  WIRE_VERSION,
} from "../../src/proto/mod.ts";
import { message } from "./arbitraries.ts";

const a = Address.parse("10.0.0.1:7946");
const ping: Message = {
  type: "ping",
  seq: 42,
  sender: { id: a.id, address: a, incarnation: 3 },
  records: [],
};

describe("encode and decode", () => {
  it("decode(encode(m)) equals m for every message that fits, and encode refuses the rest", () => {
    fc.assert(
      fc.property(message, (m) => {
        if (encodedSize(m) > MAX_MESSAGE_BYTES) {
          assert.throws(() => encode(m), RangeError);
          return;
        }
        const bytes = encode(m);
        assert.equal(bytes.length, encodedSize(m));
        assert.ok(bytes.length <= MAX_DATAGRAM_BYTES - TAG_BYTES);
        assert.deepEqual(decode(bytes), { ok: true, value: m });
      }),
      { numRuns: 500 },
    );
  });

  it("never throws on arbitrary bytes, and whatever it accepts encodes back to the same", () => {
    const anyBytes = fc.oneof(
      fc.uint8Array({ maxLength: 1600 }),
      // Bytes that start like a datagram of this version reach deeper.
      fc.tuple(fc.nat({ max: 7 }), fc.uint8Array({ maxLength: 200 })).map(([type, rest]) =>
        new Uint8Array([WIRE_VERSION, 0, type, ...rest])
      ),
    );
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        const result = decode(bytes);
        if (result.ok) assert.deepEqual(decode(encode(result.value)), result);
        else assert.equal(typeof result.error, "string");
      }),
      { numRuns: 2_000 },
    );
  });

  it("refuses a datagram cut inside its last section", () => {
    // Whole trailing sections can go unnoticed (signing is what detects
    // tampering), but a section cut short never passes.
    fc.assert(fc.property(message, (m) => {
      fc.pre(encodedSize(m) <= MAX_MESSAGE_BYTES && m.records.length > 0 && !m.extension);
      const bytes = encode(m);
      for (const cut of [1, 2, 5, 17]) {
        assert.equal(decode(bytes.subarray(0, bytes.length - cut)).ok, false, `cut ${cut}`);
      }
    }));
  });

  it("says why it refuses", () => {
    const bytes = encode(ping);
    const altered = (at: number, value: number) => bytes.map((b, i) => (i === at ? value : b));
    assert.deepEqual(decode(new Uint8Array([1])), { ok: false, error: "too-short" });
    assert.deepEqual(decode(new Uint8Array(MAX_DATAGRAM_BYTES + 1)), {
      ok: false,
      error: "too-long",
    });
    assert.deepEqual(decode(altered(0, 2)), { ok: false, error: "version" });
    assert.deepEqual(decode(altered(1, 0x80)), { ok: false, error: "flags" });
    assert.deepEqual(decode(altered(2, 99)), { ok: false, error: "type" });
    assert.deepEqual(decode(altered(15, 5)), { ok: false, error: "address" });
  });

  it("skips sections of kinds it does not know, so later versions can add some, and counts them", () => {
    const unknown = new Uint8Array([200, 0, 3, 1, 2, 3]);
    const bytes = new Uint8Array([...encode(ping), ...unknown]);
    assert.deepEqual(decode(bytes), { ok: true, value: ping, skippedSections: 1 });
  });

  it("pads with a section of zeros that counts in the size and that decode drops", () => {
    const padded = encode({ ...ping, padding: 100 });
    assert.equal(padded.length, encodedSize(ping) + 3 + 100);
    assert.equal(encodedSize({ ...ping, padding: 100 }), padded.length);
    assert.ok(padded.subarray(padded.length - 100).every((b) => b === 0));
    assert.deepEqual(decode(padded), { ok: true, value: ping });
    assert.throws(() => encode({ ...ping, padding: -1 }), /padding/);
    assert.throws(() => encode({ ...ping, padding: MAX_MESSAGE_BYTES }), RangeError);
  });

  it("carries lives in a section of their own, which a datagram without lives leaves out", () => {
    const b = Address.parse("10.0.0.2:7946");
    const withLives: Message = {
      ...ping,
      sender: { ...ping.sender, life: 77 },
      records: [{ state: "alive", id: b.id, address: b, incarnation: 1, life: 78 }],
    };
    const bytes = encode(withLives);
    assert.equal(bytes.length, encodedSize(withLives));
    assert.deepEqual(decode(bytes), { ok: true, value: withLives });
    // As a node of an earlier release sends it: no section, no life.
    const older = { ...withLives, sender: ping.sender, records: [{ ...withLives.records[0] }] };
    delete (older.records[0] as { life?: number }).life;
    assert.equal(encode(older).length, bytes.length - 3 - 8);
    assert.deepEqual(decode(encode(older)), { ok: true, value: older });
    // A lives section with one life too few for its records is refused.
    const short = bytes.slice(0, bytes.length - 4);
    new DataView(short.buffer).setUint16(short.length - 4 - 2, 4);
    assert.deepEqual(decode(short), { ok: false, error: "section" });
  });

  it("names on a helper's ping whom it probes for, in a section other types skip", () => {
    const requester = Address.parse("[2001:db8::7]:7946");
    const forOther: Message = { ...ping, requester: { id: requester.id, address: requester } };
    const bytes = encode(forOther);
    assert.equal(bytes.length, encodedSize(ping) + 3 + 8 + 19);
    assert.equal(encodedSize(forOther), bytes.length);
    assert.deepEqual(decode(bytes), { ok: true, value: forOther });
    // A node of an earlier release skips the section, as any kind it does
    // not know; on an ack it means nothing, and is skipped too.
    const section = bytes.subarray(encode(ping).length);
    const ack = { ...ping, type: "ack" as const };
    assert.deepEqual(decode(new Uint8Array([...encode(ack), ...section])), {
      ok: true,
      value: ack,
    });
    // Twice, cut short, or with bytes left over, it is refused.
    const twice = new Uint8Array([...bytes, ...section]);
    assert.deepEqual(decode(twice), { ok: false, error: "section" });
    const cut = new Uint8Array([...encode(ping), 6, 0, 5, ...section.subarray(3, 8)]);
    assert.deepEqual(decode(cut), { ok: false, error: "truncated" });
    const long = new Uint8Array([...encode(ping), 6, 0, 28, ...section.subarray(3), 0]);
    assert.deepEqual(decode(long), { ok: false, error: "section" });
  });

  it("names the number that is not a u32", () => {
    assert.throws(() => encode({ ...ping, seq: -1 }), /seq/);
    assert.throws(
      () => encode({ ...ping, sender: { ...ping.sender, incarnation: 2 ** 32 } }),
      /sender\.incarnation/,
    );
  });
});

describe("signed datagrams", () => {
  it("carry a tag after the message, which decode skips and splitSigned finds", () => {
    const bytes = encode(ping);
    const signed = prepareSigned(bytes);
    assert.equal(signed.length, bytes.length + TAG_BYTES);
    signed.set(new Uint8Array(TAG_BYTES).fill(0xab), bytes.length);
    assert.deepEqual(decode(signed), { ok: true, value: ping });
    const parts = splitSigned(signed);
    assert.ok(parts);
    assert.equal(parts.covered.length, bytes.length);
    assert.deepEqual(parts.tag, new Uint8Array(TAG_BYTES).fill(0xab));
    assert.equal(splitSigned(bytes), undefined);
  });

  it("fit in MAX_DATAGRAM_BYTES whatever the message", () => {
    fc.assert(fc.property(message, (m) => {
      fc.pre(encodedSize(m) <= MAX_MESSAGE_BYTES);
      assert.ok(prepareSigned(encode(m)).length <= MAX_DATAGRAM_BYTES);
    }));
  });
});
