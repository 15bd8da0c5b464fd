/**
 * Putting a guard together from its checked options: the book of limits,
 * the enforcer on the runtime's clock, the key hashes' key, and for a guard
 * in a fleet its socket and gossip task. The builder collects and checks
 * the options; this is where they become running parts.
 *
 * @module
 */

import { Enforcer } from "../core/enforcer.ts";
import { FleetNode } from "../core/fleet_node.ts";
import { type HashKey, hashKey, PUBLIC_HASH_KEY } from "../core/hash.ts";
import { COLD_FRACTION } from "../core/options.ts";
import type { ResolvedGuardOptions } from "../core/option_checks.ts";
import { LimitBook } from "../core/rules.ts";
import { Address } from "../proto/mod.ts";
import { GossipTask } from "./gossip.ts";
import { saltHashKey } from "./salt.ts";
import { monotonicClock, steadyClock } from "./clock.ts";
import type { GuardParts } from "./_parts.ts";

/**
 * Makes the parts of the guard the options describe; with `bind`, binds
 * its socket and starts gossip. The guard is made from them by its own
 * module, so nothing here names it.
 *
 * @param options The options, checked and with their defaults.
 * @returns A promise of the running parts; it rejects with an `Error`
 *   naming the address when the port cannot be bound.
 */
export async function assemble(options: ResolvedGuardOptions): Promise<GuardParts> {
  const hashKey = options.keySalt === undefined
    ? PUBLIC_HASH_KEY
    : await saltHashKey(options.keySalt);
  const parts = partsOf(options, hashKey);
  return options.bind === undefined ? parts : await spawnFleet(options, options.bind, parts);
}

async function spawnFleet(
  options: ResolvedGuardOptions,
  bind: Address,
  parts: GuardParts,
): Promise<GuardParts> {
  const { book, enforcer, clock } = parts;
  const membershipSeed = crypto.getRandomValues(new Uint32Array(1))[0];
  let node: FleetNode | undefined;
  const gossip = await GossipTask.start({
    bindHost: bind.host,
    bindPort: bind.port,
    clock,
    protocolPeriodMs: options.protocolPeriodMs,
    makeNode: (port) =>
      node = new FleetNode({
        address: options.advertise ?? Address.of(bind.ip, port),
        seeds: options.seeds,
        book,
        enforcer,
        policy: options.partitionPolicy,
        hotKeys: options.hotKeys,
        fleetRules: options.fleetRules,
        sharedBurst: options.sharedBurst,
        // Fleet rules are versioned in wall-clock time: the one reading of it here.
        wallOffsetMs: Date.now() - clock(),
        ticketKey: hashKey(crypto.getRandomValues(new Uint8Array(16))),
        membership: {
          seed: membershipSeed,
          protocolPeriodMs: options.protocolPeriodMs,
          maxMembers: options.maxMembers,
        },
      }),
    onDeath: () => node?.fail(clock()),
    auth: options.auth,
  });
  return { ...parts, gossip, operations: gossip.node };
}

function partsOf(options: ResolvedGuardOptions, hashKey: HashKey): GuardParts {
  const book = new LimitBook(options.limit, {
    maxClasses: options.maxClasses,
    maxKeyLimits: options.maxKeyLimits,
    maxKeyBytes: options.maxKeyBytes,
  });
  book.setClasses(options.classes);
  const clock = options.clock === undefined ? monotonicClock : steadyClock(options.clock);
  const originMs = clock();
  const enforcer = new Enforcer(book, {
    capacity: 2 * options.trackedKeys,
    maxBlocks: options.maxBlocks,
    overflowScale: COLD_FRACTION,
    fleet: options.bind ? { hashKey } : undefined,
    originMs,
  });
  enforcer.dryRun = options.dryRun;
  return {
    book,
    enforcer,
    operations: enforcer,
    clock,
    partitionPolicy: options.partitionPolicy,
    auth: options.auth,
    hashKey,
    mostDenied: options.mostDenied,
  };
}
