/**
 * The join protocol of a node: its seeds (looked up and contacted), whether
 * it is still joining, the paged transfer of a seed's members, and the
 * pings that introduce a newcomer to every seed.
 *
 * @module
 */

import type { Address, StateMessage } from "../../proto/mod.ts";
import type { MembershipConfig } from "./config.ts";
import type { SendFields } from "./prober.ts";
import type { Member } from "./table.ts";
import { type ResolveRequest, Seeds, type UnresolvedSeed } from "./seeds.ts";

/** Times a page of a membership transfer is asked for again before giving up. */
const PAGE_TRIES = 3;

/** What the join protocol reads from its node and sends through it. */
export interface JoinHost {
  /** Sends a message, with piggybacked news, to `to`. */
  send(nowMs: number, to: Address, fields: SendFields): void;
  /** A fresh, random ping sequence number. */
  nextSeq(): number;
  /** The member at `key` (canonical address text), if held. */
  member(key: string): Member | undefined;
  /** Alive and suspect members held, this node excluded. */
  live(): number;
}

/** One node's side of joining. */
export class Join {
  readonly #config: MembershipConfig;
  readonly #host: JoinHost;
  readonly #seeds: Seeds;
  /** Reached a live member once, or found itself the first of its fleet: joining is over for good. */
  #joined: boolean;
  #introduced = false;
  /** The membership transfer under way: whom to ask for which page. */
  #sync: { from: Address; page: number; askedAtMs: number; tries: number } | undefined;

  /**
   * @param self This node's address.
   * @param seeds The seeds it was given.
   * @param config The node's configuration.
   * @param host The node.
   */
  constructor(
    self: Address,
    seeds: readonly string[],
    config: MembershipConfig,
    host: JoinHost,
  ) {
    this.#config = config;
    this.#host = host;
    this.#seeds = new Seeds(self, seeds);
    this.#joined = !this.#seeds.configured || this.#seeds.alone;
  }

  /** Whether it has seeds that may name a peer and has never reached a live member. */
  get joining(): boolean {
    return !this.#joined;
  }

  /** A live member was reached: joining is over. */
  joined(): void {
    this.#joined = true;
  }

  /** Why it is joining; empty when not. */
  joinBlocked(nowMs: number): string {
    return this.#joined ? "" : this.#seeds.joinBlocked(nowMs);
  }

  /** Seed names that give no address now. */
  unresolved(nowMs: number): UnresolvedSeed[] {
    return this.#seeds.unresolved(nowMs);
  }

  /** Whether the operator named `address` a seed. */
  isSeed(address: Address): boolean {
    return this.#seeds.has(address);
  }

  /** The seeds this node holds as members. */
  seedMembers(): Member[] {
    const held: Member[] = [];
    for (const seed of this.#seeds.addresses) {
      const member = this.#host.member(seed.toString());
      if (member) held.push(member);
    }
    return held;
  }

  /** The next seed name to look up, if due. */
  pollResolve(): ResolveRequest | undefined {
    return this.#seeds.pollResolve();
  }

  /** Seed `name` resolved to `ips`; alone, a new seed is worth a join now. */
  resolved(nowMs: number, name: string, ips: readonly string[]): void {
    const fresh = this.#seeds.resolved(nowMs, name, ips);
    if (this.#seeds.alone) this.#joined = true;
    if (fresh && this.#host.live() === 0) this.#contactSeed(nowMs, () => true);
  }

  /** The lookup of seed `name` failed. */
  failed(nowMs: number, name: string): void {
    this.#seeds.failed(nowMs, name);
  }

  /** When a seed lookup is next due, or Infinity. */
  nextDeadlineMs(): number {
    return this.#seeds.nextDeadlineMs();
  }

  /** Runs the seed lookups that are due. */
  handleTimeout(nowMs: number): void {
    this.#seeds.handleTimeout(nowMs);
  }

  /** Alone: a join to the next seed. */
  alone(nowMs: number): void {
    this.#contactSeed(nowMs, () => true);
  }

  /**
   * A period's work once among members: the introduction to the seeds
   * (once), then the period's `probe`, a page asked again, and a seed that is not a live member
   * contacted every `seedIntervalMs`, so that the two sides of a long
   * partition find each other when the network heals.
   */
  tick(nowMs: number, probe: () => void): void {
    if (!this.#introduced) this.#introduce(nowMs);
    probe();
    this.#retryPage(nowMs);
    if (nowMs - this.#seeds.lastContactMs >= this.#config.seedIntervalMs) {
      this.#contactSeed(nowMs, (seed) => {
        const member = this.#host.member(seed.toString());
        return !member || member.state === "dead" || member.state === "left";
      });
    }
  }

  /**
   * Asks for the page after `state`, from the member that sent it. One
   * transfer at a time, and never a page twice: a duplicated or late answer
   * must not start a second chain of requests.
   */
  page(nowMs: number, from: Address, state: StateMessage): void {
    const sync = this.#sync;
    const next = state.page + 1;
    if (sync && !(sync.from.equals(from) && next > sync.page)) return;
    if (next >= state.pages) {
      this.#sync = undefined;
      return;
    }
    this.#sync = { from, page: next, askedAtMs: nowMs, tries: 0 };
    this.#host.send(nowMs, from, { type: "join", page: next });
  }

  #contactSeed(nowMs: number, wanted: (seed: Address) => boolean): void {
    const seed = this.#seeds.next(nowMs, wanted);
    if (seed !== undefined) this.#host.send(nowMs, seed, { type: "join", page: 0 });
  }

  /**
   * Once joined, pings every seed, which answers with a ping that proves
   * this node to it: members pick seeds first to help probe a member they
   * have only heard of, so a newcomer every seed knows is reached at once.
   */
  #introduce(nowMs: number): void {
    this.#introduced = true;
    for (const seed of this.#seeds.addresses) {
      this.#host.send(nowMs, seed, { type: "ping", seq: this.#host.nextSeq() });
    }
  }

  /** Asks again for a page that did not come within a period; gives up after a few tries. */
  #retryPage(nowMs: number): void {
    const sync = this.#sync;
    if (!sync || nowMs - sync.askedAtMs < this.#config.protocolPeriodMs) return;
    if (sync.tries >= PAGE_TRIES) {
      this.#sync = undefined;
      return;
    }
    sync.tries++;
    sync.askedAtMs = nowMs;
    this.#host.send(nowMs, sync.from, { type: "join", page: sync.page });
  }
}
