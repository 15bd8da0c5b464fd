// fast-check generators of addresses, records and messages, shared by the
// wire-format tests.
import fc from "fast-check";
import { Address, MemberId, type MemberRecord, type Message } from "../../src/proto/mod.ts";

const u32 = fc.nat({ max: 0xffff_ffff });

export const address: fc.Arbitrary<Address> = fc.oneof(
  fc.tuple(fc.uint8Array({ minLength: 4, maxLength: 4 }), fc.nat({ max: 0xffff })),
  fc.tuple(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.nat({ max: 0xffff })),
).map(([ip, port]) => Address.of(ip, port));

export const memberId: fc.Arbitrary<MemberId> = fc.tuple(u32, u32).map(([hi, lo]) =>
  new MemberId(hi, lo)
);

/** IDs are usually the address's, but the codec must carry any. */
const peer = fc.tuple(address, fc.option(memberId)).map(([a, id]) => ({
  address: a,
  id: id ?? a.id,
}));

/** A life, or none: 0 on the wire is no life, so a drawn one is never 0. */
const life = fc.option(fc.integer({ min: 1, max: 0xffff_ffff }), { nil: undefined }).map((n) =>
  n === undefined ? {} : { life: n }
);

export const record: fc.Arbitrary<MemberRecord> = fc.tuple(
  peer,
  u32,
  fc.constantFrom("alive", "suspect", "dead", "left" as const),
  memberId,
  life,
).map(([p, incarnation, state, from, l]): MemberRecord =>
  state === "suspect"
    ? { ...p, incarnation, ...l, state, from }
    : { ...p, incarnation, ...l, state: state as "alive" | "dead" | "left" }
);

const envelope = fc.record({
  sender: fc.tuple(peer, u32, life).map(([p, incarnation, l]) => ({ ...p, incarnation, ...l })),
  records: fc.array(record, { maxLength: 30 }),
  extension: fc.option(fc.uint8Array({ maxLength: 300 }), { nil: undefined }),
});

export const message: fc.Arbitrary<Message> = fc.tuple(
  envelope,
  fc.constantFrom("ping", "ack", "nack", "pingReq", "join", "state", "gossip" as const),
  u32,
  peer,
  fc.tuple(fc.nat({ max: 0xffff }), fc.nat({ max: 0xffff })),
  fc.option(peer, { nil: undefined }),
).map(([e, type, seq, target, [page, pages], requester]): Message => {
  const base = {
    sender: e.sender,
    records: e.records,
    ...(e.extension ? { extension: e.extension } : {}),
  };
  if (type === "pingReq") return { ...base, type, seq, target };
  if (type === "join") return { ...base, type, page };
  if (type === "state") return { ...base, type, page, pages };
  if (type === "gossip") return { ...base, type };
  if (type === "ping" && requester) return { ...base, type, seq, requester };
  return { ...base, type, seq };
});
