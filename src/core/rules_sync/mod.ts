/**
 * Fleet rules: a class, a key limit, a shadow, the default limit, dry run
 * or a key's block set or removed on any instance applies on every
 * instance, by gossip. A block travels as the wall-clock instant it ends
 * (`BlockedUntil`), so a member that learns it late blocks for what is left,
 * and an ended block is a removal (`table.ts`). Refunds and resets stay
 * local: they move this instance's debt, within its share, not a rule
 * (a reset lifts the fleet's block, a rule, with a removal).
 * Opt-in (`fleetRules`); sans I/O, driven by the fleet node.
 *
 * **The table.** Each rule, named by (kind, class, key), is a
 * last-writer-wins register: the entry with the highest version wins,
 * wherever and in whatever order entries arrive, so every member that has
 * seen the same changes holds the same table. A removal is an entry too
 * (a tombstone, with no value): it wins over every older set and loses to
 * every newer one.
 *
 * **The version.** A hybrid logical clock: wall-clock milliseconds (read
 * by the runtime, passed in as an offset) times 1,024, raised past every
 * version this member has seen, then the origin's member ID to break a
 * tie. Why not a Lamport counter: a tombstone must expire after a bounded
 * time, and a member must tell a change it lacks because it is new from
 * one it lacks because its removal was forgotten; both need to know how
 * old a version is, which a counter cannot say (a member cut off for a day
 * would come back with a low counter, and its fresh changes would lose to
 * stale ones). Why clock drift does not break it: the clock part only
 * orders concurrent changes (neither saw the other) by wall time, and a
 * change made after seeing another is always newer, because the clock
 * never goes below what was seen. A member whose clock runs fast wins
 * concurrent races for the amount it is ahead; a version more than
 * {@link MAX_CLOCK_SKEW_MS} (a minute) ahead of the receiver's wall clock is
 * refused, so no datagram can pin a rule for longer than that. Clocks must
 * agree within a minute (NTP).
 *
 * **Tombstones** live {@link TOMBSTONE_MS} (an hour) by their version's
 * clock, then go, so removed rules leave no residue beyond an hour's
 * removals (and the table's bound, `maxEntries`, counts them: when it is
 * full, the oldest tombstone makes room). Safe because every live member
 * hears a change within a few protocol periods by gossip, or by transfer
 * when digests disagree, long before an hour; and a member refuses a set,
 * for a rule it does not hold, no newer than the newest removal it has let
 * go (it may be one of those): what it knows decides, not the wall clock,
 * so a member started afresh takes old rules. What the bound
 * does not cover: a member cut off from all others for more than an hour
 * may keep a rule removed meanwhile; it spreads to nobody (they refuse it
 * as stale), and reissuing the removal or restarting the member ends it.
 *
 * **Gossip.** Every probe and ack carries a rules section (datagram
 * section 5, inside what is signed): the sender's digest (live rules and
 * the XOR of their hashes, 14 bytes) and recent changes, least sent first,
 * each sent λ·⌈log10(N+1)⌉ times like membership news, within the first
 * 400 bytes of room, before the demand reports (17 bytes when quiet). A quiet fleet sends nothing more: the digests
 * agree, and no datagram is added.
 *
 * **Transfer** (`transfer.ts`). A member that starts with seeds is learning: it pulls the
 * whole table of a peer that is not learning (among learners only, the
 * lowest ID heard goes first) page by page (slots in a stable order; each
 * request answered by at most four pages, each a datagram of its own, only
 * to a live member, and only when it carries the ticket the answerer drew
 * for its address: `serve.ts`), and allocation holds it at the floor until
 * that ends.
 * Two members whose digests disagree for five periods (longer than gossip
 * takes), by fresh evidence (`peer.ts`), pull one from the other the same
 * way, in the background, until the digests agree, backing off while a
 * transfer does not end the disagreement. A bulk change does
 * not wait out those periods: a member that made or took more changes
 * than gossip passes on in a few periods says it is ahead, and a peer
 * whose digest differs pulls from it at once; the member that made them
 * tells every peer so in a datagram of its own, once.
 *
 * **Precedence.** What an instance is started with (flags, builder) is its
 * table before it hears the fleet. A fleet entry, set or removal, replaces
 * it for that rule; a removed default limit or dry run goes back to the
 * start-up value. Start-up rules are not announced: they differ by
 * instance, and announcing them at each start would undo the fleet's
 * changes. A restart applies the start-up rules, then the fleet's table.
 *
 * **Security.** Rules sections are inside the signed part of a datagram:
 * under `GossipAuth.Required` only holders of the secret can change rules;
 * under Off anyone who reaches the gossip port can. A section from a sender
 * that is not a live member here is dropped and counted; a malformed header
 * too, while a malformed entry is skipped and counted alone, its neighbours
 * taken (every refusal keeps its reason for `stats()` and the runtime's
 * log); a replayed change is the same version again, and changes nothing.
 * A member whose digest stays apart from a live peer's past a minute says
 * it is out of step (`step.ts`).
 *
 * @module
 */

export { applyRule, type ApplyTarget, rulesSyncFor } from "./apply.ts";
export {
  BlockedUntil,
  compareVersions,
  HLC_TICKS_PER_MS,
  MAX_CLOCK_SKEW_MS,
  type Origin,
  RULE_KINDS,
  type RuleEntry,
  ruleId,
  type RuleKind,
  type RuleValue,
  TOMBSTONE_MS,
  type Version,
} from "./entry.ts";
export { RulesSync, type RulesSyncOptions } from "./sync.ts";
export { OUTBOX_ENTRIES } from "./gossip.ts";
export { type FleetRulesStats, NO_RULES } from "./stats.ts";
export { OUT_OF_STEP_MS } from "./step.ts";
export {
  decodeRules,
  type Digest,
  MAX_ENTRY_BYTES,
  RULES_DATAGRAM_BYTES,
  type RulesSection,
  SectionWriter,
} from "./wire.ts";
