/**
 * How a hot key's limit is split among the nodes, as one node reckons it:
 * what is left above the floors, by demand. A plain function of figures
 * the allocator keeps (allocator.ts), so that a node's own share and the
 * shares it shows for its peers come from one rule.
 *
 * @module
 */

/**
 * A node's share of a hot key: its `floor`, plus its part of `spare`, the
 * limit above the floors, R·(1 − β). Where the key's demand takes all of
 * `spare`, the part goes by demand; where it does not, each node gets its
 * demand and an even part of the rest (all of it evenly when there is
 * none). Split by demand alone, the part nobody asks for went to whoever
 * asked most: a node whose smoothed figure had just been lifted by a single
 * request took most of a quiet key's limit, and spent it when the key's
 * demand rose everywhere.
 *
 * @param spare The limit above the floors, requests a second.
 * @param floor The node's floor, R·β/N.
 * @param demand The node's demand.
 * @param total The demand of every counted member, the node's included.
 * @param n The counted members.
 * @returns The share, requests a second.
 */
export function split(
  spare: number,
  floor: number,
  demand: number,
  total: number,
  n: number,
): number {
  if (total < spare || total <= 0) return floor + demand + (spare - total) / n;
  return floor + (spare * demand) / total;
}
