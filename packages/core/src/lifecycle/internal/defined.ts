/**
 * Drops the keys whose value is `undefined`, so an object built from optional inputs fits
 * a type with exact optional properties (`exactOptionalPropertyTypes`).
 */
export type Defined<A> = {
  readonly [K in keyof A as undefined extends A[K] ? never : K]: A[K]
} & {
  readonly [K in keyof A as undefined extends A[K] ? K : never]?: Exclude<A[K], undefined>
}

/** `value` without its `undefined` entries. */
export const defined = <A extends object>(value: A): Defined<A> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Defined<A>
