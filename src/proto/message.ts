/**
 * The messages nodes exchange, as values. The byte layout is in `codec.ts`.
 *
 * @module
 */

import type { Address } from "./address.ts";
import type { MemberId } from "./member_id.ts";

/** Version of the wire format, the first byte of every datagram. */
export const WIRE_VERSION = 1;
/** No datagram, signed or not, is ever longer: a common path MTU, with room for IP and UDP headers. */
export const MAX_DATAGRAM_BYTES = 1400;
/** Length of the truncated HMAC-SHA256 tag the runtime appends to a signed datagram. */
export const TAG_BYTES = 16;
/** Room a message may take so that signing it still fits in `MAX_DATAGRAM_BYTES`. */
export const MAX_MESSAGE_BYTES: number = MAX_DATAGRAM_BYTES - TAG_BYTES;

/**
 * Message types and their numbers on the wire. Append-only: a number, once
 * published, keeps its meaning forever and is never reused.
 */
export const MESSAGE_TYPES = {
  /** A probe; the receiver answers with an ack. */
  ping: 1,
  /** The answer to a probe, sent by the target or relayed by a helper. */
  ack: 2,
  /** Asks the receiver to probe `target` on the sender's behalf (indirect probe). */
  pingReq: 3,
  /** A helper's word that the target of an indirect probe did not answer in time (Lifeguard). */
  nack: 4,
  /** Asks for one page of the receiver's live members; answered with a `state`. */
  join: 5,
  /** Records that want no answer: a leave, a refutation, a suspect's notice. */
  gossip: 6,
  /** One page of the sender's live members, answering a `join`. */
  state: 7,
} as const;

/** The name of a message type. */
export type MessageType = keyof typeof MESSAGE_TYPES;

/** What a record says of a member: the record kinds of {@link RECORD_KINDS}. */
export type MemberState = "alive" | "suspect" | "dead" | "left";

/**
 * Record kinds (member states) and their numbers on the wire. Append-only,
 * like `MESSAGE_TYPES`.
 */
export const RECORD_KINDS = {
  alive: 1,
  suspect: 2,
  dead: 3,
  left: 4,
} as const satisfies Record<MemberState, number>;

/** A member as named on the wire: its ID and the address the ID derives from. */
export interface Peer {
  /** The member's ID, which must be its address's. */
  readonly id: MemberId;
  /** Where the member is reached. */
  readonly address: Address;
}

/** The member a datagram comes from, with its current incarnation. */
export interface Sender extends Peer {
  /** The sender's incarnation, a u32 only it raises. */
  readonly incarnation: number;
  /**
   * Which life of the member at this address: a nonzero u32 it draws at
   * start, so that a process started again at the same address is told
   * from the one before it whatever their incarnations. Absent (0 on the
   * wire) from a node that does not send lives.
   */
  readonly life?: number;
}

/** News of a member: its state at an incarnation. */
export type MemberRecord =
  & Sender
  & (
    | { readonly state: "alive" | "dead" | "left" }
    | {
      readonly state: "suspect";
      /** Who suspects it, so that independent suspicions can be counted. */
      readonly from: MemberId;
    }
  );

/** What every message carries. */
export interface Envelope {
  /** Who sends it; a receiver answers to `sender.address`. */
  readonly sender: Sender;
  /** Piggybacked news of members (the sender's own record excepted). */
  readonly records: readonly MemberRecord[];
  /**
   * Opaque bytes of a layer above membership (demand reports), carried by
   * probes and acks and by requests and nacks of indirect probes. Absent
   * when there are none.
   */
  readonly extension?: Uint8Array;
  /**
   * Opaque bytes of the fleet's rule sharing (changes, digests, pages of
   * the table), on any message type; absent when there are none.
   */
  readonly rules?: Uint8Array;
  /**
   * Zero bytes that only lengthen the datagram, read by nobody: a joiner
   * pays with them for the page it asks for, since a node sends an address
   * it has not heard answer no more bytes than it received in its name.
   */
  readonly padding?: number;
}

/** A probe, an ack or a nack, matched by sequence number. */
export interface SequencedMessage extends Envelope {
  /** Which of the three. */
  readonly type: "ping" | "ack" | "nack";
  /** The probe's sequence number, a u32. */
  readonly seq: number;
  /**
   * On a helper's ping: the member it probes for. The target, which may not
   * have proven that member's address, challenges it on the bytes this
   * datagram brought in its name (see `core/membership/gate.ts`).
   */
  readonly requester?: Peer;
}

/** A request to probe `target` on the sender's behalf. */
export interface PingReqMessage extends Envelope {
  /** Always "pingReq". */
  readonly type: "pingReq";
  /** The sequence number the helper's ack or nack will carry, a u32. */
  readonly seq: number;
  /** The member to probe. */
  readonly target: Peer;
}

/**
 * A request for one page of the receiver's membership. One datagram answers
 * one request, so a forged join cannot make a node flood its victim.
 */
export interface JoinMessage extends Envelope {
  /** Always "join". */
  readonly type: "join";
  /** Which page, from 0; a u16. */
  readonly page: number;
}

/** One page of the sender's live members. */
export interface StateMessage extends Envelope {
  /** Always "state". */
  readonly type: "state";
  /** Which page this is, from 0; a u16. */
  readonly page: number;
  /** How many pages there are, at least 1; a u16. */
  readonly pages: number;
}

/** Records that want no answer. */
export interface GossipMessage extends Envelope {
  /** Always "gossip". */
  readonly type: "gossip";
}

/** Any message of the wire format. */
export type Message =
  | SequencedMessage
  | PingReqMessage
  | JoinMessage
  | StateMessage
  | GossipMessage;
