/**
 * A membership node: SWIM with Lifeguard's refinements, as a sans-I/O state
 * machine. The runtime (or the simulator) feeds it datagrams and timeouts and
 * sends what it asks to send.
 *
 * This file is the node's face (the core's inputs and outputs, its members
 * and its counters) and the wiring of its parts, each an idea of its own:
 * the join protocol (`join.ts`), what the node says of itself and its
 * refutations (`self.ts`), a datagram taken and each message type's answer
 * (`receive.ts`), news of other members and what it sets going (`news.ts`),
 * the probes (`prober.ts`), the member table (`table.ts`), what it sends
 * (`outbox.ts`, `compose.ts`, `gate.ts`), its leave (`leave.ts`) and what it
 * reports (`stats.ts`).
 *
 * @module
 */

import type { Address } from "../../proto/mod.ts";
import { Prng } from "../prng.ts";
import { Broadcasts } from "./broadcasts.ts";
import { Composer } from "./compose.ts";
import {
  checkSeed,
  type MembershipConfig,
  type MembershipOptions,
  resolveConfig,
} from "./config.ts";
import type { MemberInfo, MembershipExtension } from "./extension.ts";
import { MemberNews } from "./news.ts";
import { MemberTable } from "./table.ts";
import { Prober } from "./prober.ts";
import { Gate } from "./gate.ts";
import { Outbox, type Transmit } from "./outbox.ts";
import { Join } from "./join.ts";
import { goodbyes } from "./leave.ts";
import { Receiver } from "./receive.ts";
import { Reconnect } from "./reconnect.ts";
import { SelfRecord } from "./self.ts";
import type { ResolveRequest } from "./seeds.ts";
import type { MembershipStats } from "./stats.ts";

export type { Transmit } from "./outbox.ts";

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
  readonly #own: SelfRecord;
  readonly #receiver: Receiver;
  readonly #news: MemberNews;
  readonly #reconnect: Reconnect;
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
  #nextTickMs = 0;
  #left = false;

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
    const selfKey = address.toString();
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
    this.#own = new SelfRecord(address, {
      seed,
      prng: this.#prng,
      fanout: this.#config.indirectProbes,
      host: {
        send: (nowMs, to, fields) => this.#outbox.send(nowMs, to, fields),
        members: () => this.#table.values(),
        reachable: (member) => this.#outbox.reachable(member),
        suspected: () => this.#prober.worse(1),
        announce: (record) => this.#broadcasts.push(selfKey, record),
      },
    });
    this.#table = new MemberTable(
      this.#config,
      (change, member) => this.#news.changed(change, member),
    );
    this.#gate = new Gate(this.#config.maxMembers);
    this.#prober = new Prober(this.#config, this.#prng, {
      send: (nowMs, to, fields, relay) =>
        this.#outbox.send(nowMs, to, fields, relay && { ...relay, relayed: true }),
      look: (nowMs, to, seq) => this.#outbox.send(nowMs, to, { type: "ping", seq }, { lean: true }),
      suspect: (nowMs, member) => this.#news.suspect(nowMs, member),
      live: () => this.#table.values(),
      proven: () => this.#news.proven(),
      seeds: () => this.#join.seedMembers(),
      newsPending: () => this.#broadcasts.size > 0,
      reachable: (member) => this.#outbox.reachable(member),
      helperRank: (member) => this.#outbox.helperRank(member),
      provenCount: () => this.#gate.provenCount,
      dueLook: (nowMs, withinMs) => this.#table.dueLook(nowMs, withinMs),
    });
    this.#composer = new Composer({
      config: this.#config,
      extension: this.#extension,
      table: this.#table,
      broadcasts: this.#broadcasts,
      randomMember: () => this.#prober.randomMember(),
      sender: () => this.#own.sender(),
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
    this.#reconnect = new Reconnect(seed, {
      live: () => this.#table.live,
      ping: (nowMs, member, prng) =>
        this.#outbox.reconnect(nowMs, member.address, this.#prober.nextSeq(prng)),
    });
    this.#news = new MemberNews({
      address,
      config: this.#config,
      self: this.#own,
      table: this.#table,
      broadcasts: this.#broadcasts,
      gate: this.#gate,
      outbox: this.#outbox,
      prober: this.#prober,
      join: this.#join,
      reconnect: this.#reconnect,
      extension: this.#extension,
    });
    this.#receiver = new Receiver({
      address,
      self: this.#own,
      gate: this.#gate,
      prober: this.#prober,
      outbox: this.#outbox,
      composer: this.#composer,
      join: this.#join,
      extension: this.#extension,
      news: this.#news,
    });
  }

  /** Where the other members reach this node. */
  get address(): Address {
    return this.#self;
  }

  /** This node's incarnation: raised only to refute news of its death. */
  get incarnation(): number {
    return this.#own.incarnation;
  }

  /**
   * Which life of a member at this address this node is: drawn from its
   * seed at start, so a process started again with another seed (the
   * runtime draws one at random) is told from the one before it.
   */
  get life(): number {
    return this.#own.life;
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
    this.#receiver.take(nowMs, bytes);
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
    if (this.#table.live === 0) this.#join.alone(nowMs);
    else this.#join.tick(nowMs, () => this.#prober.probeNext(nowMs, this.#nextTickMs));
    this.#reconnect.tick(nowMs);
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
    const next = Math.min(this.#nextTickMs, this.#prober.nextDeadlineMs());
    return Math.min(next, this.#join.nextDeadlineMs(), this.#table.nextDeadlineMs() ?? Infinity);
  }

  /**
   * Announces that this node is going: peers drop it within a round, with no
   * suspicion. The node then stops; drain `pollTransmit()` before closing.
   */
  leave(): void {
    if (this.#left) return;
    const members = this.#table.values();
    for (const { to, bytes } of goodbyes(this.#own.sender(), { members, prng: this.#prng })) {
      this.#outbox.transmit(to, bytes);
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
      incarnation: this.#own.incarnation,
      awareness: this.#prober.awareness,
      joining: this.joining,
      joinBlocked: this.joinBlocked(nowMs),
      unresolvedSeeds: this.#join.unresolved(nowMs),
      membersFull: this.#table.isFull(nowMs),
      membersRefused: this.#table.refused,
      identityConflicts: this.#own.identityConflicts,
      suspectLooks: this.#table.looks,
      corrections: this.#receiver.corrections,
      mismatchedRecords: this.#receiver.mismatched,
      malformed: this.#receiver.malformed,
      skippedSections: this.#receiver.skippedSections,
      left: this.#left,
      withheldDatagrams: this.#gate.withheldDatagrams,
      withheldBytes: this.#gate.withheldBytes,
    };
  }
}
