/**
 * Identifiers of the simulator, drawn from one seeded PRNG so that a seeded simulator
 * hands out the same keys, serial numbers and guids on every run.
 */
import { PCGRandom } from "effect/Utils"

const hex = "0123456789abcdef"

/** A generator of identifiers. */
export class Ids {
  private random: PCGRandom
  constructor(seed: number | undefined) {
    this.random = Ids.generator(seed)
  }
  private static generator(seed: number | undefined): PCGRandom {
    return seed === undefined ? new PCGRandom() : new PCGRandom(seed >>> 0)
  }
  /** Draws the ids from here on from `seed` (a fresh random one when undefined). */
  reseed(seed: number | undefined): void {
    this.random = Ids.generator(seed)
  }
  digits(n: number): string {
    let out = ""
    for (let i = 0; i < n; i++) out += String(this.random.integer(10))
    return out
  }
  hex(n: number): string {
    let out = ""
    for (let i = 0; i < n; i++) out += hex[this.random.integer(16)]
    return out
  }
  /** A UUID v4. */
  uuidV4(): string {
    const variant = hex[8 + this.random.integer(4)]
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${variant}${this.hex(3)}-${this.hex(12)}`
  }
  /** A UUID v1-like string, the shape of `efttransactionID` in real results. */
  uuidV1(): string {
    const variant = hex[8 + this.random.integer(4)]
    return `${this.hex(8)}-${this.hex(4)}-1${this.hex(3)}-${variant}${this.hex(3)}-${this.hex(12)}`
  }
  /** An API key: not a real key format, only unguessable enough for a sandbox. */
  apiKey(): string {
    return `sim_${this.hex(32)}`
  }
}

/** A lowercase or uppercase UUID of any version. */
export const isGuid = (s: string): boolean =>
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s)

/** A UUID v4 (version nibble 4, RFC 4122 variant). */
export const isUuidV4 = (s: string): boolean =>
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/.test(s)
