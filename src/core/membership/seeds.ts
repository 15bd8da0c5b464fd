/**
 * A node's seeds, sans I/O: the names it was configured with, what each
 * resolved to, when each is to be looked up again, and which to contact
 * next. An IP literal is its own address from the start; a host name is
 * looked up by the runtime (or the simulator) when the node asks, and the
 * answer comes back as an event. Whether the node is still joining is
 * decided from these facts, never from the timing of a lookup.
 *
 * @module
 */

import { Address } from "../../proto/mod.ts";
import { formatHostPort, splitHostPort } from "../../proto/host_port.ts";

/** How often a name that resolved is looked up again: a headless service's instances come and go. */
export const RESOLVE_EVERY_MS = 30_000;

/** The first retry of a name whose lookup failed; it doubles up to {@link RESOLVE_EVERY_MS}. */
const RETRY_FIRST_MS = 1_000;

/** Addresses kept of one name: enough to find a live member, bounded whatever the answer. */
export const MAX_ADDRESSES_PER_SEED = 256;

/** A lookup the node wants done: `host`'s addresses, answered for `name`. */
export interface ResolveRequest {
  /** The seed as configured, by which the answer is given back. */
  readonly name: string;
  /** The host name to look up (A and AAAA). */
  readonly host: string;
}

/** A seed as written: `ip:port`, `[v6]:port` or `host:port`. */
export interface ParsedSeed {
  /** The host part, without brackets. */
  readonly host: string;
  /** The port. */
  readonly port: number;
  /** The address, when the host is an IP literal. */
  readonly address: Address | undefined;
}

/**
 * Reads a seed.
 *
 * @throws {TypeError} naming the seed, if it is not `ip:port`, `[v6]:port` or `host:port`.
 *
 * @param seed The seed's text.
 * @returns Its host and port, and its address when the host is an IP literal.
 */
export function parseSeed(seed: string): ParsedSeed {
  const split = splitHostPort(seed);
  if (split === undefined) {
    throw new TypeError(`a seed must be ip:port or host:port, got ${JSON.stringify(seed)}`);
  }
  const { host, port } = split;
  const address = ipAddress(host, port);
  if (split.bracketed && address === undefined) {
    throw new TypeError(`a seed in brackets must be an IPv6 address, got ${JSON.stringify(seed)}`);
  }
  return { host, port, address };
}

/** `ip` with `port`, or undefined when `ip` is not an IP literal. */
function ipAddress(ip: string, port: number): Address | undefined {
  try {
    return Address.parse(formatHostPort(ip, port));
  } catch {
    return undefined;
  }
}

interface SeedName {
  readonly name: string;
  readonly parsed: ParsedSeed;
  /** What the last answer gave, this node left out. */
  addresses: Address[];
  /** Whether the last answer named this node (an IP literal: from the start). */
  namesSelf: boolean;
  /** When it is next to be looked up; Infinity for an IP literal. */
  dueMs: number;
  /** Failed lookups in a row. */
  failures: number;
  /** When the last lookup failed; -Infinity if none has. */
  failedMs: number;
  /** When it was first asked for in its present stretch without an address; undefined while it has one. */
  unresolvedSinceMs: number | undefined;
  /** Whether the last answer came and named no address. */
  empty: boolean;
}

/**
 * A seed name that gives no address now: never answered, answered empty,
 * or failing. Such a name keeps a node joining when no other seed leads to
 * a peer, and is told in the stats rather than left to silence.
 */
export interface UnresolvedSeed {
  /** The seed as configured. */
  readonly seed: string;
  /** Its lookups that failed in a row. */
  readonly failedLookups: number;
  /** Whether its last lookup was answered, with no address (a name with no instance behind it). */
  readonly emptyAnswer: boolean;
  /** Milliseconds since it was first looked up without giving an address. */
  readonly unresolvedForMs: number;
  /** Milliseconds since its last lookup failed; null if none has. */
  readonly sinceLastFailureMs: number | null;
}

/** See the module doc. */
export class Seeds {
  readonly #self: Address;
  readonly #names = new Map<string, SeedName>();
  readonly #queue: ResolveRequest[] = [];
  #addresses: Address[] = [];
  /** The canonical text of each of `#addresses`, for {@link has}. */
  #keys = new Set<string>();
  #cursor = 0;
  #lastContactMs = -Infinity;

  /**
   * The seeds of the node at `self`.
   *
   * @throws {TypeError} naming the first seed that is not `ip:port` or `host:port`.
   */
  constructor(self: Address, names: readonly string[]) {
    if (!Array.isArray(names)) {
      throw new TypeError(`seeds must be an array of ip:port or host:port, got ${typeof names}`);
    }
    this.#self = self;
    for (const name of names) {
      const parsed = parseSeed(name);
      if (this.#names.has(name)) continue;
      const literal = parsed.address;
      this.#names.set(name, {
        name,
        parsed,
        addresses: literal && !literal.equals(self) ? [literal] : [],
        namesSelf: literal !== undefined && literal.equals(self),
        dueMs: literal ? Infinity : -Infinity,
        failures: 0,
        failedMs: -Infinity,
        unresolvedSinceMs: undefined,
        empty: false,
      });
    }
    this.#collect();
  }

  /** Whether the node was configured with any seed, itself included. */
  get configured(): boolean {
    return this.#names.size > 0;
  }

  /**
   * Whether the seeds name this node and no other: such a node is the first
   * of its fleet, not a newcomer. A name not yet answered, answered empty, or
   * whose lookups fail may still name a peer.
   */
  get alone(): boolean {
    for (const seed of this.#names.values()) if (!seed.namesSelf) return false;
    return this.#addresses.length === 0;
  }

  /** Every address the seeds name now, this node left out. */
  get addresses(): readonly Address[] {
    return this.#addresses;
  }

  /** Whether the seeds name `address` now: the operator named it, so it is sent to freely. */
  has(address: Address): boolean {
    return this.#keys.has(address.toString());
  }

  /** Queues the lookups due at `nowMs`; a lookup not answered within {@link RESOLVE_EVERY_MS} is asked again. */
  handleTimeout(nowMs: number): void {
    for (const seed of this.#names.values()) {
      if (seed.dueMs > nowMs) continue;
      seed.dueMs = nowMs + RESOLVE_EVERY_MS;
      seed.unresolvedSinceMs ??= gives(seed) ? undefined : nowMs;
      this.#queue.push({ name: seed.name, host: seed.parsed.host });
    }
  }

  /** The next lookup to do, if any. */
  pollResolve(): ResolveRequest | undefined {
    return this.#queue.shift();
  }

  /** When a lookup is next due. */
  nextDeadlineMs(): number {
    let next = Infinity;
    for (const seed of this.#names.values()) if (seed.dueMs < next) next = seed.dueMs;
    return next;
  }

  /**
   * The answer to a lookup of `name`: its IP addresses (text, as a resolver
   * gives them; any that is not an IP is ignored). Returns whether the seeds
   * now name an address they did not before.
   *
   * @throws {RangeError} if `name` is not one of the seeds.
   * @throws {TypeError} if `ips` is not an array.
   */
  resolved(nowMs: number, name: string, ips: readonly string[]): boolean {
    const seed = this.#seed(name);
    if (!Array.isArray(ips)) {
      throw new TypeError(`ips must be an array of IP texts, got ${typeof ips}`);
    }
    const before = new Set(this.#addresses.map((a) => a.toString()));
    const addresses: Address[] = [];
    seed.namesSelf = false;
    for (const ip of ips) {
      if (addresses.length >= MAX_ADDRESSES_PER_SEED) break;
      const address = typeof ip === "string" ? ipAddress(ip, seed.parsed.port) : undefined;
      if (address?.equals(this.#self)) seed.namesSelf = true;
      else if (address && !addresses.some((a) => a.equals(address))) {
        addresses.push(address);
      }
    }
    seed.addresses = addresses;
    seed.failures = 0;
    seed.empty = !gives(seed);
    seed.unresolvedSinceMs = seed.empty ? seed.unresolvedSinceMs ?? nowMs : undefined;
    seed.dueMs = nowMs + RESOLVE_EVERY_MS;
    this.#collect();
    return this.#addresses.some((a) => !before.has(a.toString()));
  }

  /**
   * A lookup of `name` failed: it keeps what it last resolved to, and is
   * tried again after 1 s, then 2 s, 4 s and so on up to {@link RESOLVE_EVERY_MS}.
   *
   * @throws {RangeError} if `name` is not one of the seeds.
   */
  failed(nowMs: number, name: string): void {
    const seed = this.#seed(name);
    seed.failures++;
    seed.failedMs = nowMs;
    seed.dueMs = nowMs + Math.min(RESOLVE_EVERY_MS, RETRY_FIRST_MS * 2 ** (seed.failures - 1));
  }

  /**
   * The next seed to send a join to among those `wanted` accepts, round-robin;
   * `nowMs` is noted as the last contact.
   */
  next(nowMs: number, wanted: (seed: Address) => boolean): Address | undefined {
    const count = this.#addresses.length;
    for (let i = 0; i < count; i++) {
      const seed = this.#addresses[(this.#cursor + i) % count];
      if (!wanted(seed)) continue;
      this.#cursor = (this.#cursor + i + 1) % count;
      this.#lastContactMs = nowMs;
      return seed;
    }
    return undefined;
  }

  /**
   * The names that give no address now, in the order configured.
   *
   * @param nowMs The time, ms.
   * @returns One entry per such name; none for IP literals.
   */
  unresolved(nowMs: number): UnresolvedSeed[] {
    const out: UnresolvedSeed[] = [];
    for (const seed of this.#names.values()) {
      if (gives(seed)) continue;
      out.push({
        seed: seed.name,
        failedLookups: seed.failures,
        emptyAnswer: seed.empty && seed.failures === 0,
        unresolvedForMs: Math.max(0, nowMs - (seed.unresolvedSinceMs ?? nowMs)),
        sinceLastFailureMs: seed.failures > 0 ? Math.max(0, nowMs - seed.failedMs) : null,
      });
    }
    return out;
  }

  /**
   * Why a node that is joining has reached no one, in a line an operator
   * can act on: each name that gives no address, and how many addresses it
   * has tried without an answer. Every place that tells it (the stats, the
   * sidecar's `/readyz` and its log) takes this text.
   *
   * @param nowMs The time, ms.
   * @returns The reason, starting "joining: ".
   */
  joinBlocked(nowMs: number): string {
    const why: string[] = [];
    const tried = this.#addresses.length;
    if (tried > 0) {
      why.push(`no member answered at ${tried} seed address${tried === 1 ? "" : "es"}`);
    }
    for (const seed of this.unresolved(nowMs)) {
      if (seed.failedLookups > 0) {
        const n = seed.failedLookups;
        why.push(`seed ${seed.seed} has not resolved (${n} lookup${n === 1 ? "" : "s"} failed)`);
      } else if (seed.emptyAnswer) {
        why.push(`seed ${seed.seed} resolved to no address`);
      } else {
        why.push(`seed ${seed.seed} is being looked up`);
      }
    }
    return `joining: ${why.join("; ") || "no seed yet"}`;
  }

  /** When a seed was last contacted. */
  get lastContactMs(): number {
    return this.#lastContactMs;
  }

  #seed(name: string): SeedName {
    const seed = this.#names.get(name);
    if (seed === undefined) {
      throw new RangeError(`not a seed of this node: ${JSON.stringify(name)}`);
    }
    return seed;
  }

  #collect(): void {
    const all: Address[] = [];
    const seen = new Set<string>();
    for (const seed of this.#names.values()) {
      for (const address of seed.addresses) {
        const key = address.toString();
        if (!seen.has(key)) all.push(address), seen.add(key);
      }
    }
    this.#addresses = all;
    this.#keys = seen;
    if (this.#cursor >= all.length) this.#cursor = 0;
  }
}

/** Whether a name gives an address now, or names this node (then it is answered). */
function gives(seed: SeedName): boolean {
  return seed.addresses.length > 0 || seed.namesSelf;
}
