/**
 * The currencies the service accepts (spec 2.5) with the ISO 4217 minor-unit exponent of
 * each: the number of decimal places between the major unit a person reads ("10.50 EUR")
 * and the integer minor units a terminal is sent ("1050"). Historic codes of the list
 * (BYR, EEK, LTL, LVL, STD, SLL, VEF, ZMK …) keep the exponent ISO 4217 gave them.
 */
import * as Schema from "effect/Schema"

/**
 * Every currency code of spec 2.5 mapped to its ISO 4217 exponent.
 *
 * Exponent 0: BIF BYR CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF.
 * Exponent 3: BHD IQD JOD KWD LYD OMR TND. Every other code of the list: 2.
 */
export const exponents = {
  AED: 2,
  AFN: 2,
  ALL: 2,
  AMD: 2,
  ANG: 2,
  AOA: 2,
  ARS: 2,
  AUD: 2,
  AWG: 2,
  AZN: 2,
  BAM: 2,
  BBD: 2,
  BDT: 2,
  BGN: 2,
  BHD: 3,
  BIF: 0,
  BMD: 2,
  BND: 2,
  BOB: 2,
  BOV: 2,
  BRL: 2,
  BSD: 2,
  BTN: 2,
  BWP: 2,
  BYR: 0,
  BZD: 2,
  CAD: 2,
  CDF: 2,
  CHF: 2,
  CLP: 0,
  CNY: 2,
  COP: 2,
  COU: 2,
  CRC: 2,
  CUC: 2,
  CUP: 2,
  CVE: 2,
  CZK: 2,
  DJF: 0,
  DKK: 2,
  DOP: 2,
  DZD: 2,
  EEK: 2,
  EGP: 2,
  ERN: 2,
  ETB: 2,
  EUR: 2,
  FJD: 2,
  FKP: 2,
  GBP: 2,
  GEL: 2,
  GHS: 2,
  GIP: 2,
  GMD: 2,
  GNF: 0,
  GTQ: 2,
  GYD: 2,
  HKD: 2,
  HNL: 2,
  HRK: 2,
  HTG: 2,
  HUF: 2,
  IDR: 2,
  ILS: 2,
  INR: 2,
  IQD: 3,
  IRR: 2,
  ISK: 0,
  JMD: 2,
  JOD: 3,
  JPY: 0,
  KES: 2,
  KGS: 2,
  KHR: 2,
  KMF: 0,
  KPW: 2,
  KRW: 0,
  KWD: 3,
  KYD: 2,
  KZT: 2,
  LAK: 2,
  LBP: 2,
  LKR: 2,
  LRD: 2,
  LSL: 2,
  LTL: 2,
  LVL: 2,
  LYD: 3,
  MAD: 2,
  MDL: 2,
  MKD: 2,
  MMK: 2,
  MNT: 2,
  MOP: 2,
  MUR: 2,
  MVR: 2,
  MWK: 2,
  MXN: 2,
  MXV: 2,
  MYR: 2,
  MZN: 2,
  NAD: 2,
  NGN: 2,
  NIO: 2,
  NOK: 2,
  NPR: 2,
  NZD: 2,
  OMR: 3,
  PAB: 2,
  PEN: 2,
  PGK: 2,
  PHP: 2,
  PKR: 2,
  PLN: 2,
  PYG: 0,
  QAR: 2,
  RON: 2,
  RSD: 2,
  RUB: 2,
  RWF: 0,
  SAR: 2,
  SBD: 2,
  SCR: 2,
  SDG: 2,
  SEK: 2,
  SGD: 2,
  SHP: 2,
  SLL: 2,
  SOS: 2,
  SRD: 2,
  STD: 2,
  SYP: 2,
  SZL: 2,
  THB: 2,
  TJS: 2,
  TMT: 2,
  TND: 3,
  TOP: 2,
  TRY: 2,
  TTD: 2,
  TWD: 2,
  TZS: 2,
  UAH: 2,
  UGX: 0,
  VND: 0,
  VUV: 0,
  WST: 2,
  XAF: 0,
  XCD: 2,
  XOF: 0,
  XPF: 0,
  YER: 2,
  ZAR: 2,
  ZMK: 2,
  ZWL: 2,
  USD: 2,
  UZS: 2,
  VEF: 2
} as const satisfies Record<string, 0 | 2 | 3>

/** A currency code of the spec's list. */
export type Currency = keyof typeof exponents

/** Every currency code of the spec's list, in the spec's order. */
export const codes: ReadonlyArray<Currency> = Object.keys(exponents) as Array<Currency>

/**
 * The strict currency schema, used on everything we send: one of the listed codes,
 * exactly as written (upper case).
 */
export const Currency: Schema.Literal<[Currency, ...Array<Currency>]> = Schema.Literal(
  ...(codes as [Currency, ...Array<Currency>])
).annotations({ identifier: "Currency", description: "an ISO 4217 code of the service's currency list" })

/** Whether a string is one of the listed currency codes. */
export const isCurrency = (u: unknown): u is Currency =>
  typeof u === "string" && Object.prototype.hasOwnProperty.call(exponents, u)

/**
 * The ISO 4217 minor-unit exponent of a currency: 2 for EUR (cents), 0 for JPY, 3 for BHD.
 *
 * @example
 * exponent("BHD") // 3
 */
export const exponent = (currency: Currency): 0 | 2 | 3 => exponents[currency]
