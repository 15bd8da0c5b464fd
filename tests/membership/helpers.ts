// Drives a single Node by hand: crafted datagrams in, decoded messages out.
import {
  Address,
  decode,
  encode,
  type MemberRecord,
  type Message,
  type Node,
  type Transmit,
} from "../../src/core/membership/mod.ts";

import type { Member } from "../../src/core/membership/table.ts";

export const addr = (i: number): Address => Address.parse(`10.0.0.${i}:7946`);

export function sender(i: number, incarnation = 0): Message["sender"] {
  const address = addr(i);
  return { id: address.id, address, incarnation };
}

export function record(
  i: number,
  state: "alive" | "dead" | "left",
  incarnation = 0,
): MemberRecord {
  const address = addr(i);
  return { state, address, id: address.id, incarnation };
}

export function suspect(i: number, by: number, incarnation = 0): MemberRecord {
  const address = addr(i);
  return { state: "suspect", address, id: address.id, incarnation, from: addr(by).id };
}

/** A gossip datagram from node `from` carrying `records`. */
export function gossip(from: number, records: MemberRecord[], incarnation = 0): Uint8Array {
  return encode({ type: "gossip", sender: sender(from, incarnation), records });
}

export function drain(node: Node): Transmit[] {
  const out: Transmit[] = [];
  for (let t = node.pollTransmit(); t; t = node.pollTransmit()) out.push(t);
  return out;
}

/** Every datagram the node has to send, decoded, with its destination. */
export function sent(node: Node): { to: string; message: Message }[] {
  return drain(node).map((t) => {
    const result = decode(t.bytes);
    if (!result.ok) throw new Error(`the node sent an undecodable datagram: ${result.error}`);
    return { to: t.to.toString(), message: result.value };
  });
}

/**
 * Makes `node` take member `i` as proven: `i` sends it a padded gossip,
 * which pays for the ping that challenges it (unless one went to it lately,
 * still queued), and answers the ping with its sequence number.
 */
export function prove(node: Node, i: number, nowMs = 0): void {
  const paying = encode({ type: "gossip", sender: sender(i), records: [], padding: 100 });
  node.handleDatagram(nowMs, addr(i), paying);
  const ping = sent(node).find((s) => s.to === addr(i).toString() && s.message.type === "ping");
  if (!ping || !("seq" in ping.message)) throw new Error(`the node did not ping ${i}`);
  const ack = encode({ type: "ack", seq: ping.message.seq, sender: sender(i), records: [] });
  node.handleDatagram(nowMs, addr(i), ack);
  drain(node);
}

/** An alive member at 10.0.x.y, admitted i-th (i up to 65,535). */
export function member(i: number): Member {
  const address = Address.parse(`10.0.${i >> 8}.${i & 255}:7946`);
  return {
    address,
    id: address.id,
    key: address.toString(),
    state: "alive",
    incarnation: 0,
    life: 0,
    changedAtMs: 0,
    suspicion: undefined,
    suspectedBy: undefined,
    admitted: i,
  };
}
