/**
 * A node's leave: a `left` record of itself, sent on a datagram of its own
 * to its live members, at most `LEAVE_FANOUT` of them at random (the rest
 * hear it by gossip), so that peers drop it at once, with no suspicion.
 *
 * @module
 */

import { encode, type MemberRecord, type Sender } from "../../proto/mod.ts";
import type { Prng } from "../prng.ts";
import type { Transmit } from "./outbox.ts";
import type { Member } from "./table.ts";

/** Members told directly of a leave; the rest hear it by gossip. */
const LEAVE_FANOUT = 64;

/**
 * The datagrams that announce a leave.
 *
 * @param sender This node's word of itself.
 * @param options The members it holds, and the node's random stream.
 * @returns A goodbye for each member told directly.
 */
export function goodbyes(
  sender: Sender,
  options: { members: Iterable<Member>; prng: Prng },
): Transmit[] {
  const goodbye: MemberRecord = { state: "left", ...sender };
  const live = [...options.members].filter((m) => m.state === "alive" || m.state === "suspect");
  return options.prng.shuffle(live).slice(0, LEAVE_FANOUT).map((member) => ({
    to: member.address,
    bytes: encode({ type: "gossip", sender, records: [goodbye] }),
  }));
}
