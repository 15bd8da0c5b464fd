/**
 * The fleet's index of keys by hash. Peers name keys by their 64-bit hash
 * (a demand report carries no key), so the allocator finds a key a peer
 * reports hot through this index. A key is hashed once, when it takes a
 * place in the key table, and leaves the index when it leaves the table:
 * a key that comes back gets a new slot, which must not sit beside its old
 * one. A standalone guard has no index and hashes no key.
 *
 * @module
 */

import { hashId, type HashKey, keyHash64 } from "./hash.ts";
import type { Slot } from "./keytable.ts";

/** Slots of the key table by their key's {@link hashId}. */
export class KeyHashIndex {
  readonly #hashKey: HashKey;
  readonly #byId = new Map<number, Slot>();

  /**
   * An empty index hashing with `hashKey`.
   *
   * @param hashKey The key of the 64-bit key hashes (the salt's, or the public key).
   */
  constructor(hashKey: HashKey) {
    this.#hashKey = hashKey;
  }

  /** Slots indexed now. */
  get size(): number {
    return this.#byId.size;
  }

  /**
   * Hashes the slot's key into `slot.hash` and indexes the slot by it.
   *
   * @param slot A slot that has just taken its place in the table.
   */
  add(slot: Slot): void {
    const hash = keyHash64(this.#hashKey, slot.className, slot.key);
    slot.hash = hash;
    this.#byId.set(hashId(hash), slot);
  }

  /**
   * Forgets an evicted slot; a slot of another key with the same id stays.
   *
   * @param slot The slot leaving the table.
   */
  delete(slot: Slot): void {
    if (slot.hash === undefined) return;
    const id = hashId(slot.hash);
    if (this.#byId.get(id) === slot) this.#byId.delete(id);
  }

  /**
   * The slot of the key with this id, if the table holds it.
   *
   * @param id A key hash's {@link hashId}.
   * @returns The slot, or undefined.
   */
  get(id: number): Slot | undefined {
    return this.#byId.get(id);
  }
}
