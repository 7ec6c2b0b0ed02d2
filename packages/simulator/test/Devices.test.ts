import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Harness } from "./support.js"
import { reference, withSimulator } from "./support.js"

const command = (h: Harness, name: string, body: unknown, key?: string) =>
  h.main(`/devices/${h.type}/${h.serial}/${name}`, body, key)

describe("device commands", () => {
  it.live("accepts values in range with 202 and no body, and applies them to the terminal", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const brightness = yield* command(h, "set-screen-brightness", {
          minimumBrightnessLevel: 0,
          maximumBrightnessLevel: 100
        })
        expect(brightness.status).toBe(202)
        expect(brightness.text).toBe("")
        expect((yield* command(h, "set-reboot-time", { hour: 23 })).status).toBe(202)
        expect((yield* command(h, "set-locale", { locale: "fr_FR" })).status).toBe(202)
        expect((yield* command(h, "set-unattended-mode", { status: true })).status).toBe(202)
        expect((yield* command(h, "set-password-protected", { status: true })).status).toBe(202)
        const settings = (yield* h.admin("GET", `/terminals/${h.serial}`)).json.settings
        expect(settings).toMatchObject({
          minimumBrightnessLevel: 0,
          maximumBrightnessLevel: 100,
          rebootHour: 23,
          locale: "fr_FR",
          unattended: true,
          passwordProtected: true
        })
      })
    )
  )

  it.live("answers 400 for values outside the range and 422 for an invalid request", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        for (const body of [
          { minimumBrightnessLevel: 0, maximumBrightnessLevel: 101 },
          { minimumBrightnessLevel: -1, maximumBrightnessLevel: 50 },
          { minimumBrightnessLevel: 80, maximumBrightnessLevel: 20 }
        ]) {
          const reply = yield* command(h, "set-screen-brightness", body)
          expect(reply.status).toBe(400)
          expect(reply.json.error.code).toBe("VALUE_OUT_OF_RANGE")
        }
        expect((yield* command(h, "set-reboot-time", { hour: 24 })).status).toBe(400)
        expect((yield* command(h, "set-reboot-time", { hour: "3" })).status).toBe(422)
        expect((yield* command(h, "set-screen-brightness", { minimumBrightnessLevel: 1 })).status).toBe(422)
        expect((yield* command(h, "set-locale", { locale: "en-US" })).status).toBe(422)
        expect((yield* command(h, "set-unattended-mode", {})).status).toBe(422)
        expect((yield* command(h, "reboot", { force: "yes" })).status).toBe(422)
      })
    )
  )

  it.live(
    "refuses a device that is not listening, answers 403 to a wrong key and 404 to an unknown device",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          yield* h.admin("PATCH", `/terminals/${h.serial}`, { listening: false })
          const deaf = yield* command(h, "set-locale", { locale: "en_GB" })
          expect(deaf.status).toBe(400)
          expect(deaf.json.error.code).toBe("DEVICE_NOT_LISTENING")
          yield* h.admin("PATCH", `/terminals/${h.serial}`, { listening: true, online: false })
          expect((yield* command(h, "set-locale", { locale: "en_GB" })).status).toBe(400)
          expect((yield* command(h, "set-locale", { locale: "en_GB" }, "wrong")).status).toBe(403)
          expect(
            (yield* h.main(`/devices/${h.type}/0000000000/set-locale`, { locale: "en_GB" })).status
          ).toBe(404)
        })
      )
  )

  it.live(
    "reboot without force refuses a busy terminal; with force it aborts the operation, which is not charged",
    () =>
      withSimulator({ timings: { WaitingForCard: 60_000, Reboot: 5_000 } }, (h) =>
        Effect.gen(function* () {
          const accepted = yield* h.send({
            operation: "sale",
            amount: "1000",
            currency: "EUR",
            transactionReference: reference()
          })
          const polite = yield* command(h, "reboot", { force: false })
          expect(polite.status).toBe(400)
          expect(polite.json.error.code).toBe("DEVICE_BUSY")
          expect((yield* command(h, "reboot", { force: true })).status).toBe(202)
          yield* h.settle
          const result = yield* h.main(`/transaction-result/${accepted.json.transactionResultId}`)
          expect(result.json.finStatus).toBe("FAILED")
          expect((yield* h.counters()).charges).toBe(0)
          const down = yield* h.eventually(`/terminals/${h.serial}`, (t) => t.online === false)
          expect(down.online).toBe(false)
          yield* h.advance(5_000)
          const up = yield* h.eventually(`/terminals/${h.serial}`, (t) => t.online === true)
          expect(up.online).toBe(true)
        })
      )
  )
})
