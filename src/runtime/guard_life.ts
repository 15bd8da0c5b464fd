/**
 * A guard's life, behind its methods of the same names: whether it runs,
 * how its gossip is signed, and its leave (the goodbyes, then the socket
 * closed). A standalone guard runs until it leaves; one in a fleet runs
 * while its background task does.
 *
 * @module
 */

import { type AuthConfig, authConfig, type GossipAuthMode, type Secret } from "../core/auth.ts";
import type { GuardParts } from "./_parts.ts";
import type { Clock } from "./clock.ts";
import type { GossipTask } from "./gossip.ts";

/** A guard's life: see the module doc. */
export class GuardLife {
  readonly #gossip: GossipTask | undefined;
  readonly #clock: Clock;
  #auth: AuthConfig;
  #running = true;

  constructor(parts: GuardParts) {
    this.#gossip = parts.gossip;
    this.#clock = parts.clock;
    this.#auth = parts.auth;
  }

  isRunning(): boolean {
    return this.#gossip ? this.#gossip.running : this.#running;
  }

  /** How gossip is signed now: the task's, or the standalone guard's setting. */
  gossipAuth(): GossipAuthMode {
    return this.#gossip?.auth.mode ?? this.#auth.mode;
  }

  setGossipAuth(mode: GossipAuthMode, secrets: readonly Secret[]): void {
    this.#auth = authConfig(mode, secrets);
    this.#gossip?.setAuth(this.#auth);
  }

  async leave(): Promise<void> {
    this.#running = false;
    if (this.#gossip === undefined) return;
    this.#gossip.node.fail(this.#clock());
    await this.#gossip.leave();
  }
}
