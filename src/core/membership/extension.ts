/**
 * The seam between membership and the layer above it (allocation): extra
 * bytes on the datagrams membership sends, and news of members as it happens.
 *
 * @module
 */

import type { MemberState, Peer, Sender } from "../../proto/mod.ts";

/** A member as this node sees it. */
export interface MemberInfo extends Peer {
  /** What this node believes of it. */
  readonly state: MemberState;
  /** The incarnation that belief is about. */
  readonly incarnation: number;
  /** Which life of the member it is about, when known (see `Sender.life`). */
  readonly life?: number;
}

/** A change in what this node believes of a member. */
export interface MemberChange {
  /** The member, as it is now; `state` is "forgotten" once its tombstone has expired. */
  readonly member: Peer & {
    readonly state: MemberState | "forgotten";
    readonly incarnation: number;
    /** Which life of the member, when known: a new one means it started again. */
    readonly life?: number;
  };
  /** What this node believed before; undefined for a member it had not heard of. */
  readonly previous: MemberState | undefined;
  /** When the change happened. */
  readonly nowMs: number;
}

/**
 * What the layer above plugs in. Every method is optional and called
 * synchronously from inside the node's inputs; none may throw.
 */
export interface MembershipExtension {
  /**
   * Bytes to carry to `to`, a member proven (or a seed), at most
   * `maxBytes`, or undefined for none: on a probe or an ack, where
   * membership keeps some room for itself, and on a request or a nack of
   * an indirect probe, in the room its records leave.
   */
  outgoing?(nowMs: number, to: Peer, maxBytes: number): Uint8Array | undefined;
  /** Bytes another node's extension put on a message it sent here. */
  incoming?(nowMs: number, from: Sender, bytes: Uint8Array): void;
  /**
   * Bytes of the fleet's rule sharing to carry on a probe or an ack to
   * `to`, at most `maxBytes`: asked before the demand bytes, within a share.
   */
  outgoingRules?(nowMs: number, to: Peer, maxBytes: number): Uint8Array | undefined;
  /** Rule-sharing bytes on any message another node sent here. */
  incomingRules?(nowMs: number, from: Sender, bytes: Uint8Array): void;
  /** A member joined, was suspected, died, left, came back or was forgotten. */
  memberChanged?(change: MemberChange): void;
}
