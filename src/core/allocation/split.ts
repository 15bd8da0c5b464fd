/**
 * How a hot key's limit is split among the nodes, as one node reckons it:
 * the split of what is left above the floors, and the pace at which a share
 * may rise above the fair share R/N. Plain functions of figures the
 * allocator keeps (allocator.ts).
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

/**
 * A settled key's share, above the fair R/N only as far as the split has
 * given it for the last `rounds` rounds, as long as news takes to cross the
 * fleet: a node whose share rises has taken its peers' part before they
 * have heard why. When a hot key's demand jumps everywhere at once, the
 * nodes that had it hot before see their own demand rise at once, and
 * their peers' only as the peers' reports come (a peer whose key was cold
 * names nothing, and counts for none); the split gave them several times
 * R/N for a second or two, and a fleet of 100 offered a request a second an
 * instance held shares adding up to 1.39 R. A share that falls is taken at
 * once: the strict side.
 *
 * `least` holds the least share the split gave in each round, by round
 * modulo its length (at least `rounds`); the allocator sets a round's entry
 * to Infinity when the round starts, and leaves the rounds while the key
 * settled at Infinity: its split then rose with its demand estimate, and a
 * node far above R/N held back when it settled admitted less while its peers
 * took their lower shares at once.
 *
 * @param least The least split of each round; this round's is updated.
 * @param round The current round.
 * @param rounds How many rounds back the least is taken, this one included.
 * @param share The split's share now.
 * @param fair The fair share R/N.
 * @returns The share to apply.
 */
export function paced(
  least: Float64Array,
  round: number,
  rounds: number,
  share: number,
  fair: number,
): number {
  const length = least.length;
  const at = round % length;
  if (share < least[at]) least[at] = share;
  if (share <= fair) return share;
  let lowest = share;
  for (let k = 1; k < rounds; k++) {
    const x = least[(round - k + length) % length];
    if (x < lowest) lowest = x;
  }
  return Math.max(fair, lowest);
}
