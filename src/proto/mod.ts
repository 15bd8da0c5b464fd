/**
 * The wire format of rateguard's gossip: addresses, member IDs, messages,
 * and `encode`/`decode`. Pure: no I/O, no clock, no runtime globals.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Address, decode, encode, MAX_DATAGRAM_BYTES } from "./mod.ts";
 * const address = Address.parse("10.0.0.1:7946");
 * const bytes = encode({
 *   type: "gossip",
 *   sender: { id: address.id, address, incarnation: 3 },
 *   records: [],
 * });
 * assert(bytes.length <= MAX_DATAGRAM_BYTES);
 * assert(decode(bytes).ok);
 * assert(!decode(new Uint8Array([9, 9, 9])).ok);
 * ```
 *
 * @module
 */

export { Address } from "./address.ts";
export { formatHostPort, type HostPort, splitHostPort } from "./host_port.ts";
export { MemberId } from "./member_id.ts";
export {
  type Envelope,
  type GossipMessage,
  type JoinMessage,
  MAX_DATAGRAM_BYTES,
  MAX_MESSAGE_BYTES,
  type MemberRecord,
  type MemberState,
  type Message,
  MESSAGE_TYPES,
  type MessageType,
  type Peer,
  type PingReqMessage,
  RECORD_KINDS,
  type Sender,
  type SequencedMessage,
  type StateMessage,
  TAG_BYTES,
  WIRE_VERSION,
} from "./message.ts";
export {
  decode,
  type DecodeError,
  type DecodeResult,
  encode,
  encodedSize,
  FLAG_SIGNED,
  prepareSigned,
  recordSize,
  splitSigned,
} from "./codec.ts";
