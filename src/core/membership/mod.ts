/**
 * Membership of a rateguard cluster, sans I/O: SWIM with the Lifeguard
 * refinements, over the wire format of `src/proto`, which this module
 * re-exports. Feed a `Node` datagrams and timeouts; send what it polls out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Address } from "../../proto/mod.ts";
 * import { Node } from "./mod.ts";
 * const node = new Node(Address.parse("10.0.0.1:7946"), { seed: 7, seeds: ["10.0.0.2:7946"] });
 * node.handleTimeout(0);
 * const join = node.pollTransmit();
 * assert(join?.to.toString() === "10.0.0.2:7946");
 * assert(node.stats(0).joining);
 * ```
 *
 * @module
 */

export * from "../../proto/mod.ts";
export { Prng } from "../prng.ts";
export { Node, type Transmit } from "./node.ts";
export type { MembershipStats } from "./stats.ts";
export { MAX_MEMBERS_LIMIT, type MembershipOptions } from "./config.ts";
export { type ParsedSeed, parseSeed, type ResolveRequest, type UnresolvedSeed } from "./seeds.ts";
export type { MemberChange, MemberInfo, MembershipExtension } from "./extension.ts";
