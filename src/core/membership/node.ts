/**
 * A membership node: SWIM with Lifeguard's refinements, as a sans-I/O state
 * machine. The runtime (or the simulator) feeds it datagrams and timeouts and
 * sends what it asks to send.
 *
 * @module
 */

import {
  type Address,
  decode,
  encode,
  type MemberRecord,
  type Message,
  type Sender,
} from "../../proto/mod.ts";
import { Prng } from "../prng.ts";
import { Broadcasts } from "./broadcasts.ts";
import { Composer, recordOf } from "./compose.ts";
import {
  checkSeed,
  type MembershipConfig,
  type MembershipOptions,
  resolveConfig,
} from "./config.ts";
import type { MemberChange, MemberInfo, MembershipExtension } from "./extension.ts";
import { type Applied, MAX_INCARNATION, type Member, MemberTable, otherLife } from "./table.ts";
import { Prober } from "./prober.ts";
import { Gate } from "./gate.ts";
import { Outbox, type Transmit } from "./outbox.ts";
import { Join } from "./join.ts";
import type { ResolveRequest, UnresolvedSeed } from "./seeds.ts";

export type { Transmit } from "./outbox.ts";

/** What a node knows of the cluster and what it has refused, for `guard.stats()`. */
export interface MembershipStats {
  /** Members seen alive or suspect, this node included. */
  readonly clusterSize: number;
  /** Members suspected and not yet refuted or dead. */
  readonly suspects: number;
  /** Dead and departed members still remembered (tombstones). */
  readonly tombstones: number;
  /** This node's incarnation. */
  readonly incarnation: number;
  /** Lifeguard's local health score: 0 is healthy; probes slow down by (score + 1). */
  readonly awareness: number;
  /** Configured with seeds that may name a peer, and no live member reached yet. */
  readonly joining: boolean;
  /**
   * Why it is joining, as the sidecar's `/readyz` and log tell it
   * ("joining: seed rateguard.svc:7946 has not resolved (5 lookups failed)");
   * empty when not joining.
   */
  readonly joinBlocked: string;
  /** Seed names that give no address now (never answered, answered empty, or failing). */
  readonly unresolvedSeeds: readonly UnresolvedSeed[];
  /** A newcomer was refused for a full table in the last `tombstoneMs`. */
  readonly membersFull: boolean;
  /** News of newcomers refused because the member table was full. */
  readonly membersRefused: number;
  /** Times this node outbid an alive record of itself that it did not make. */
  readonly identityConflicts: number;
  /** Records dropped because their ID is not their address's. */
  readonly mismatchedRecords: number;
  /** Datagrams refused: undecodable, or a sender whose ID is not its address's. */
  readonly malformed: number;
  /** Sections of kinds this version does not know (a later version's), skipped in datagrams taken. */
  readonly skippedSections: number;
  /** Whether `leave()` was called. */
  readonly left: boolean;
  /**
   * Datagrams not sent to an address that has not shown it receives there,
   * as they would have exceeded the bytes received in its name; pages not
   * sent to any address, as they exceeded the join that asked for them;
   * and probes not made for a request to probe its own sender.
   */
  readonly withheldDatagrams: number;
  /** Bytes of those datagrams, at the least each could have taken. */
  readonly withheldBytes: number;
}

/** Members told directly of a leave; the rest hear it by gossip. */
const LEAVE_FANOUT = 64;

/** Mixed into the seed for the stream a life is drawn from, apart from the node's other choices. */
const LIFE_STREAM = 0x6c696665;

/**
 * One member of a cluster.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Address } from "../../proto/mod.ts";
 * import { Node } from "./mod.ts";
 * const a = new Node(Address.parse("10.0.0.1:7946"), { seed: 1 });
 * const b = new Node(Address.parse("10.0.0.2:7946"), { seed: 2, seeds: ["10.0.0.1:7946"] });
 * const nodes = [a, b];
 * for (let nowMs = 0; nowMs < 2_000; nowMs += 10) {
 *   for (const node of nodes) {
 *     if ((node.pollTimeout() ?? Infinity) <= nowMs) node.handleTimeout(nowMs);
 *     for (let t = node.pollTransmit(); t; t = node.pollTransmit()) {
 *       nodes.find((n) => n.address.equals(t.to))?.handleDatagram(nowMs, node.address, t.bytes);
 *     }
 *   }
 * }
 * assert(a.stats(2_000).clusterSize === 2 && b.stats(2_000).clusterSize === 2);
 * ```
 */
export class Node {
  readonly #self: Address;
  readonly #selfKey: string;
  readonly #config: MembershipConfig;
  readonly #extension: MembershipExtension | undefined;
  readonly #prng: Prng;
  readonly #table: MemberTable;
  readonly #broadcasts = new Broadcasts();
  readonly #prober: Prober;
  readonly #composer: Composer;
  readonly #gate: Gate;
  readonly #outbox: Outbox;
  readonly #join: Join;
  /** Counts the table's changes (see `#provenMembers`). */
  #tableChanges = 0;
  /** The members proven, as last read, and the counts of changes they were read at. */
  #provenKept: { gate: number; table: number; members: readonly Member[] } | undefined;
  #incarnation = 0;
  #senderNow: Sender | undefined;
  readonly #life: number;
  #nextTickMs = 0;
  #left = false;
  #malformed = 0;
  #mismatched = 0;
  #skippedSections = 0;
  #identityConflicts = 0;

  /**
   * A node alone, until it is given seeds or hears from a member.
   *
   * @param address Where the other members reach this node (its advertised address).
   * @param options Tunables; see `MembershipOptions`.
   * @throws {RangeError} if an option is out of range.
   * @throws {TypeError} if a seed is not `ip:port` or `host:port`.
   */
  constructor(address: Address, options: MembershipOptions) {
    this.#self = address;
    this.#selfKey = address.toString();
    this.#config = resolveConfig(options);
    this.#join = new Join(address, options.seeds ?? [], this.#config, {
      send: (nowMs, to, fields) => this.#outbox.send(nowMs, to, fields),
      nextSeq: () => this.#prober.nextSeq(),
      member: (key) => this.#table.get(key),
      live: () => this.#table.live,
    });
    this.#extension = options.extension;
    const seed = checkSeed(options.seed);
    this.#prng = new Prng(seed);
    // Drawn from a stream of its own, so that the node's other random
    // choices are what they would be without it. Never 0, which is no life.
    this.#life = new Prng((seed ^ LIFE_STREAM) >>> 0).nextU32() || 1;
    this.#table = new MemberTable(this.#config, (change, member) => this.#changed(change, member));
    this.#gate = new Gate(this.#config.maxMembers);
    this.#prober = new Prober(this.#config, this.#prng, {
      send: (nowMs, to, fields, relayFor) =>
        this.#outbox.send(
          nowMs,
          to,
          fields,
          relayFor === undefined ? {} : { paidBytes: relayFor, relayed: true },
        ),
      suspect: (nowMs, member) => this.#suspect(nowMs, member),
      live: () => this.#table.values(),
      proven: () => this.#provenMembers(),
      seeds: () => this.#join.seedMembers(),
      newsPending: () => this.#broadcasts.size > 0,
      reachable: (member) => this.#outbox.reachable(member),
      helperRank: (member) => this.#outbox.helperRank(member),
      provenCount: () => this.#gate.provenCount,
    });
    this.#composer = new Composer({
      config: this.#config,
      extension: this.#extension,
      table: this.#table,
      broadcasts: this.#broadcasts,
      randomMember: () => this.#prober.randomMember(),
      sender: () => this.#sender(),
      isSeed: (address) => this.#join.isSeed(address),
    });
    this.#outbox = new Outbox({
      gate: this.#gate,
      composer: this.#composer,
      isSeed: (address) => this.#join.isSeed(address),
      nextSeq: () => this.#prober.nextSeq(),
      probeTimeoutMs: this.#config.probeTimeoutMs,
      newsPending: () => this.#broadcasts.size > 0,
    });
  }

  /** Where the other members reach this node. */
  get address(): Address {
    return this.#self;
  }

  /** This node's incarnation: raised only to refute news of its death. */
  get incarnation(): number {
    return this.#incarnation;
  }

  /**
   * Which life of a member at this address this node is: drawn from its
   * seed at start, so a process started again with another seed (the
   * runtime draws one at random) is told from the one before it.
   */
  get life(): number {
    return this.#life;
  }

  /**
   * The next seed name to look up, if due (the first `handleTimeout` makes
   * every name due); answer with {@link handleResolved} or
   * {@link handleResolveFailed}. The node decides when to ask again.
   *
   * @returns The name and its host, or `undefined` when no lookup is due.
   */
  pollResolve(): ResolveRequest | undefined {
    return this.#join.pollResolve();
  }

  /**
   * The IPs (text) seed `name` resolved to, in place of what it gave before.
   *
   * @throws {RangeError} if `name` is not one of the node's seeds.
   *
   * @param nowMs The time, ms.
   * @param name The seed, as configured.
   * @param ips What it resolved to, as IP text.
   */
  handleResolved(nowMs: number, name: string, ips: readonly string[]): void {
    if (this.#left) return;
    this.#join.resolved(nowMs, name, ips);
  }

  /**
   * The lookup of seed `name` failed: it is tried again in 1 s, 2 s... up to 30 s.
   *
   * @throws {RangeError} if `name` is not one of the node's seeds.
   *
   * @param nowMs The time, ms.
   * @param name The seed, as configured.
   */
  handleResolveFailed(nowMs: number, name: string): void {
    if (this.#left) return;
    this.#join.failed(nowMs, name);
  }

  /**
   * Configured with seeds that may name a peer, and no live member ever
   * reached. Without seeds, or with seeds naming only itself, a node starts
   * a fleet rather than joins one.
   */
  get joining(): boolean {
    return this.#join.joining;
  }

  /**
   * Why this node is {@link joining}: the seed names that give no address,
   * and the addresses that have not answered.
   *
   * @param nowMs The time, ms.
   * @returns The reason, "joining: ..."; empty when not joining.
   */
  joinBlocked(nowMs: number): string {
    return this.#join.joinBlocked(nowMs);
  }

  /**
   * Takes a datagram received from `_from`, the packet's source address.
   * Answers go to the address the sender advertises in the datagram, which
   * is the one its ID derives from and may differ from `_from` behind a NAT.
   *
   * @param nowMs The time, ms.
   * @param _from Where it came from (the sender's own record is what counts).
   * @param bytes The datagram.
   */
  handleDatagram(nowMs: number, _from: Address, bytes: Uint8Array): void {
    if (this.#left) return;
    const decoded = decode(bytes);
    if (!decoded.ok || !decoded.value.sender.id.equals(decoded.value.sender.address.id)) {
      this.#malformed++;
      return;
    }
    const message = decoded.value;
    this.#skippedSections += decoded.skippedSections ?? 0;
    const { sender } = message;
    if (sender.address.equals(this.#self)) {
      this.#aboutSelf(aliveRecord(sender));
      return;
    }
    this.#gate.credit(sender.address.toString(), bytes.length);
    // The sender's word of itself first (its ID was checked above), then its news.
    let refuted = this.#apply(aliveRecord(sender), nowMs, true) === "refuted";
    for (const record of message.records) {
      if (!record.id.equals(record.address.id)) this.#mismatched++;
      else if (this.#apply(record, nowMs) === "refuted") refuted = true;
    }
    if (message.extension) this.#extension?.incoming?.(nowMs, sender, message.extension);
    if (message.rules) this.#extension?.incomingRules?.(nowMs, sender, message.rules);
    const requester = this.#requesterOf(message);
    if (requester) this.#gate.credit(requester.toString(), bytes.length);
    this.#dispatch(nowMs, message, bytes.length);
    this.#outbox.challenge(nowMs, sender.address);
    if (requester) this.#outbox.challenge(nowMs, requester);
    if (refuted) this.#spreadRefutation(nowMs, message);
  }

  /**
   * The address a helper's ping probes for, if it is one and names another
   * member's own address: the datagram brought its bytes in that member's
   * name too (see `gate.ts`).
   */
  #requesterOf(message: Message): Address | undefined {
    if (message.type !== "ping" || !message.requester) return undefined;
    const { id, address } = message.requester;
    if (!id.equals(address.id)) {
      this.#mismatched++;
      return undefined;
    }
    if (address.equals(this.#self) || address.equals(message.sender.address)) return undefined;
    return address;
  }

  /**
   * Sends a fresh refutation at once to whoever brought the news and to a
   * few members at random: waiting for the next probes would leave it to a
   * node whose awareness may have slowed them down ninefold, while the
   * suspicion timeouts run on.
   */
  #spreadRefutation(nowMs: number, cause: Message): void {
    const teller = cause.sender.address;
    // A ping or a join is answered anyway, and the answer carries the news.
    if (cause.type !== "ping" && cause.type !== "join") {
      this.#outbox.send(nowMs, teller, { type: "gossip" });
    }
    // Members it can reach: a lean datagram to one it has not proven
    // carries no news, so a refutation sent there went nowhere.
    const others = [...this.#table.values()].filter(
      (m) => m.state === "alive" && !m.address.equals(teller) && this.#outbox.reachable(m),
    );
    for (const member of this.#prng.shuffle(others).slice(0, this.#config.indirectProbes)) {
      this.#outbox.send(nowMs, member.address, { type: "gossip" });
    }
  }

  #dispatch(nowMs: number, message: Message, size: number): void {
    const to = message.sender.address;
    const peer = message.sender;
    switch (message.type) {
      case "ping":
        this.#outbox.send(nowMs, to, { type: "ack", seq: message.seq }, { peer, paidBytes: size });
        return;
      case "ack": {
        this.#gate.acked(message.seq, to.toString());
        const target = this.#prober.acked(nowMs, message.seq);
        // A helper's relay: it spent these bytes for the target, which may
        // be a member only heard of, so this node may now probe it directly.
        if (target && !target.address.equals(to)) {
          this.#gate.credit(target.key, size);
          this.#outbox.challenge(nowMs, target.address);
        }
        return;
      }
      case "nack":
        this.#prober.nacked(message.seq);
        return;
      case "pingReq":
        if (!message.target.id.equals(message.target.address.id)) this.#mismatched++;
        else if (message.target.address.equals(to)) {
          // Nobody asks for a probe of itself: such a request would get the
          // address it names both the ping and the answer it paid for.
          this.#gate.withhold(this.#composer.bareSize({ type: "ping", seq: message.seq }));
        } else if (!message.target.address.equals(this.#self)) {
          this.#prober.relay(nowMs, {
            requester: { id: peer.id, address: to },
            proven: this.#gate.isProven(to.toString()),
            seq: message.seq,
            target: message.target.address,
            paidBytes: size,
          });
        }
        return;
      case "join":
        this.#outbox.answerJoin(to, this.#composer.statePage(to, peer, message.page), size);
        return;
      case "state":
        this.#join.page(nowMs, to, message);
        return;
      case "gossip":
        return;
    }
  }

  /**
   * Runs what is due at `nowMs`: probes, their timeouts, suspicions, joins. Harmless when early.
   *
   * @param nowMs The time, ms; a spurious call is harmless.
   */
  handleTimeout(nowMs: number): void {
    if (this.#left) return;
    this.#join.handleTimeout(nowMs);
    this.#prober.handleTimeout(nowMs);
    for (const dead of this.#table.expire(nowMs)) this.#prober.forget(dead);
    if (nowMs < this.#nextTickMs) return;
    this.#nextTickMs = nowMs + this.#config.protocolPeriodMs * (this.#prober.awareness + 1);
    if (this.#table.live === 0) {
      this.#join.alone(nowMs);
      return;
    }
    this.#join.tick(nowMs, () => this.#prober.probeNext(nowMs, this.#nextTickMs));
  }

  /**
   * Sends rule-sharing bytes to `to` on a datagram of their own (a gossip
   * message, with news piggybacked as room allows), when `to` is a live
   * member: the paged transfer of the rule table, which must not wait for
   * the next probe. Anything else is dropped, so no stranger is sent it.
   *
   * @param nowMs The time, ms.
   * @param to The member.
   * @param rules The bytes, within a datagram's room.
   * @param bare With no news piggybacked: the datagram then takes no more
   *   than a request of the same rules bytes did (`rules_sync/serve.ts`).
   * @returns Whether it was queued.
   */
  sendRules(nowMs: number, to: Address, rules: Uint8Array, bare = false): boolean {
    const member = this.#table.get(to.toString());
    if (!member || (member.state !== "alive" && member.state !== "suspect")) return false;
    if (!bare) {
      this.#outbox.send(nowMs, to, { type: "gossip", rules });
      return true;
    }
    const fields = { type: "gossip", rules } as const;
    const bytes = this.#composer.compose(nowMs, to, fields, {
      maxBytes: this.#composer.bareSize(fields),
    });
    if (bytes) this.#outbox.transmit(to, bytes);
    return true;
  }

  /**
   * The next datagram to send, if any.
   *
   * @returns The next datagram to send, or `undefined` when there is none.
   */
  pollTransmit(): Transmit | undefined {
    return this.#outbox.poll();
  }

  /**
   * When `handleTimeout` is next due (0 before the first call), or undefined once left.
   *
   * @returns When to call `handleTimeout` next, or `undefined` when nothing is due.
   */
  pollTimeout(): number | undefined {
    if (this.#left) return undefined;
    let next = Math.min(
      this.#nextTickMs,
      this.#prober.nextDeadlineMs(),
      this.#join.nextDeadlineMs(),
    );
    const suspicion = this.#table.nextDeadlineMs();
    if (suspicion !== undefined && suspicion < next) next = suspicion;
    return next;
  }

  /**
   * Announces that this node is going: peers drop it within a round, with no
   * suspicion. The node then stops; drain `pollTransmit()` before closing.
   */
  leave(): void {
    if (this.#left) return;
    const goodbye: MemberRecord = { state: "left", ...this.#sender() };
    const live = [...this.#table.values()].filter((m) =>
      m.state === "alive" || m.state === "suspect"
    );
    for (const member of this.#prng.shuffle(live).slice(0, LEAVE_FANOUT)) {
      this.#outbox.transmit(
        member.address,
        encode({ type: "gossip", sender: this.#sender(), records: [goodbye] }),
      );
    }
    this.#left = true;
  }

  /**
   * Every member this node holds, the dead not yet forgotten included, itself excluded.
   *
   * @returns Every member this node knows, itself included.
   */
  members(): MemberInfo[] {
    return [...this.#table.values()].map(({ address, id, state, incarnation, life }) => ({
      address,
      id,
      state,
      incarnation,
      ...(life ? { life } : {}),
    }));
  }

  /**
   * Counters and sizes; `nowMs` decides whether `membersFull` still holds.
   *
   * @param nowMs The time, ms.
   * @returns The figures.
   */
  stats(nowMs: number): MembershipStats {
    return {
      clusterSize: this.#table.live + 1,
      suspects: this.#table.suspects,
      tombstones: this.#table.tombstones,
      incarnation: this.#incarnation,
      awareness: this.#prober.awareness,
      joining: this.joining,
      joinBlocked: this.joinBlocked(nowMs),
      unresolvedSeeds: this.#join.unresolved(nowMs),
      membersFull: this.#table.isFull(nowMs),
      membersRefused: this.#table.refused,
      identityConflicts: this.#identityConflicts,
      mismatchedRecords: this.#mismatched,
      malformed: this.#malformed,
      skippedSections: this.#skippedSections,
      left: this.#left,
      withheldDatagrams: this.#gate.withheldDatagrams,
      withheldBytes: this.#gate.withheldBytes,
    };
  }

  #sender(): Sender {
    // Asked for every datagram composed: made again only when the incarnation moved.
    if (this.#senderNow?.incarnation !== this.#incarnation) {
      const { id } = this.#self;
      this.#senderNow = {
        id,
        address: this.#self,
        incarnation: this.#incarnation,
        life: this.#life,
      };
    }
    return this.#senderNow;
  }

  /** Takes news of a member; "refuted" when it was news of this node that it had to refute. */
  #apply(record: MemberRecord, nowMs: number, direct = false): Applied | "refuted" {
    if (record.address.equals(this.#self)) return this.#aboutSelf(record) ? "refuted" : "stale";
    const applied = this.#table.apply(record, nowMs, direct);
    if (applied === "confirmed") {
      // Others count independent suspicions too, so a new witness is news.
      this.#broadcasts.push(record.address.toString(), record);
    }
    return applied;
  }

  #aboutSelf(record: MemberRecord): boolean {
    if (record.incarnation < this.#incarnation) return false;
    if (record.state === "alive") {
      // Its own news, unless another life of this address said it: the
      // process before this one, whose word must be outbid (memberlist's
      // aliveNode refutes a restart the same way).
      const mine = !otherLife(record.life, this.#life);
      if (record.incarnation === this.#incarnation && mine) return false;
      this.#identityConflicts++;
    } else if (record.state === "suspect") {
      this.#prober.worse(1);
    }
    // An attacker's u32 maximum cannot be outbid; staying at it is the best
    // there is, and there the member's own word wins (see MemberTable).
    this.#incarnation = Math.min(record.incarnation + 1, MAX_INCARNATION);
    this.#broadcasts.push(this.#selfKey, { state: "alive", ...this.#sender() });
    return true;
  }

  #suspect(nowMs: number, member: Member): void {
    if (member.state !== "alive" && member.state !== "suspect") return;
    // Nobody could ping a member only heard of lately, for want of credit:
    // a newcomer not yet proven to anyone asked, not yet one that failed.
    // Past `suspicionMaxMs` it is suspected like any other, a forger's
    // stranger included.
    const unproven = this.#outbox.helperRank(member) === 0 && !this.#outbox.reachable(member);
    if (unproven && nowMs - member.changedAtMs < this.#config.suspicionMaxMs) return;
    const { address, id, incarnation } = member;
    const record: MemberRecord = {
      state: "suspect",
      address,
      id,
      incarnation,
      from: this.#self.id,
    };
    // Already suspect, this failed probe is one more independent witness.
    if (this.#apply(record, nowMs) === "stale") return;
    // Lifeguard's buddy system: the suspect hears it first, so that it
    // refutes before the news has gone round and the timeouts run out.
    this.#outbox.send(nowMs, address, { type: "gossip" });
  }

  #changed(change: MemberChange, member: Member): void {
    this.#tableChanges++;
    const state = change.member.state;
    if (state === "dead" || state === "left" || state === "forgotten") {
      this.#gate.forget(member.key);
    }
    if (change.member.state !== "forgotten") {
      this.#broadcasts.push(member.key, recordOf(member));
      const wasLive = change.previous === "alive" || change.previous === "suspect";
      if (change.member.state === "alive" && !wasLive) this.#prober.add(member);
      if (change.member.state === "alive") this.#join.joined();
    }
    this.#extension?.memberChanged?.(change);
  }

  /**
   * The members whose address is proven, in the table's order: made again
   * only once the gate's proven addresses or the table have changed. A
   * probe whose random draws of helpers come up short reads it, and while
   * a thousand form, sorting it each time was a fiftieth of their time.
   */
  #provenMembers(): readonly Member[] {
    const gate = this.#gate.provenChanges;
    const kept = this.#provenKept;
    if (kept?.gate === gate && kept.table === this.#tableChanges) return kept.members;
    const proven: Member[] = [];
    for (const key of this.#gate.proven()) {
      const member = this.#table.get(key);
      if (member) proven.push(member);
    }
    proven.sort((a, b) => a.admitted - b.admitted);
    this.#provenKept = { gate, table: this.#tableChanges, members: proven };
    return proven;
  }
}

/**
 * A sender's word of itself as a record. Written out rather than spread
 * (`{ state: "alive", ...sender }`): a spread is a native call, and every
 * datagram received makes one.
 */
function aliveRecord(sender: Sender): MemberRecord {
  const { id, address, incarnation, life } = sender;
  return life === undefined
    ? { state: "alive", id, address, incarnation }
    : { state: "alive", id, address, incarnation, life };
}
