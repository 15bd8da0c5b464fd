/**
 * What `guard.fleetView()` tells: the members, the hot keys and how each is
 * split, and the keys denied most by name, for a picture of the fleet.
 *
 * @module
 */

import type { HotKeyView } from "../core/allocation/allocator.ts";
import type { FleetNode } from "../core/fleet_node.ts";
import type { MemberState } from "../proto/message.ts";
import type { NamedDeniedKey } from "./keystats.ts";

export type { HotKeyView, MemberShare } from "../core/allocation/allocator.ts";
export type { NamedDeniedKey } from "./keystats.ts";

/** A member as this instance believes it to be. */
export interface MemberView {
  /** Where it is reached, `ip:port`. */
  readonly address: string;
  /** Its ID, 16 hexadecimal digits (what {@link HotKeyView} names members by). */
  readonly id: string;
  /** Alive, suspect, dead or left. */
  readonly state: MemberState;
  /** The incarnation that belief is about. */
  readonly incarnation: number;
}

/** The fleet as one instance sees it. */
export interface FleetView {
  /** This instance's gossip address; `undefined` standalone. */
  readonly address: string | undefined;
  /** This instance's member ID; `undefined` standalone. */
  readonly id: string | undefined;
  /** The other members it holds, the dead and departed not yet forgotten included. */
  readonly members: readonly MemberView[];
  /** The hot keys, each with this instance's and the reporting peers' demand and share. */
  readonly hotKeys: readonly HotKeyView[];
  /** The keys denied most lately, by name, as `stats().mostDenied`. */
  readonly mostDenied: readonly NamedDeniedKey[];
  /** The keys a shadow would deny most, by name. */
  readonly mostShadowDenied: readonly NamedDeniedKey[];
}

/**
 * The view of the fleet from one node, or a standalone guard's (no node).
 *
 * @param node The guard's fleet node; none for a standalone guard.
 * @param named The keys denied most, by name.
 * @returns A fresh view.
 */
export function fleetViewOf(
  node: FleetNode | undefined,
  named: Pick<FleetView, "mostDenied" | "mostShadowDenied">,
): FleetView {
  return {
    address: node?.address.toString(),
    id: node?.address.id.toString(),
    members: (node?.members() ?? []).map((m) => ({
      address: m.address.toString(),
      id: m.id.toString(),
      state: m.state,
      incarnation: m.incarnation,
    })),
    hotKeys: node?.hotKeys() ?? [],
    ...named,
  };
}
