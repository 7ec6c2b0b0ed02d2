/**
 * The failures the simulated service answers with, and their wire form: the status code
 * and the error body of spec section 7. Terminal errors (1001, 1002, 1003) carry an
 * object `message`; gateway business errors carry `code` and `details`; the tip
 * adjustment's invalid guid carries a plain string message, as the real service does.
 */
import * as Schema from "effect/Schema"

/** 400 / 1001: the terminal is busy with another operation. */
export class DeviceBusy extends Schema.TaggedError<DeviceBusy>()("DeviceBusy", {
  message: Schema.String
}) {}

/** 400 / 1002: the terminal is offline. */
export class DeviceOffline extends Schema.TaggedError<DeviceOffline>()("DeviceOffline", {
  message: Schema.String
}) {}

/** 400 / 1003: stopCurrentTransaction at a step that cannot be cancelled. */
export class CancelNotAllowed extends Schema.TaggedError<CancelNotAllowed>()("CancelNotAllowed", {
  message: Schema.String
}) {}

/** 403: missing or unknown API key, or a partner key where a merchant key is required. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}

/** 404: unknown id, reference, selector, device or route. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}) {}

/** 422: VALIDATION_FAILED, a required field is missing or malformed. */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  message: Schema.String,
  field: Schema.optional(Schema.String)
}) {}

/** 400: a gateway business rule refused the request. */
export class BusinessRule extends Schema.TaggedError<BusinessRule>()("BusinessRule", {
  message: Schema.String,
  code: Schema.String,
  errorCode: Schema.String
}) {}

/** 400: the tip adjustment's `Invalid guid [...]` answer (string message, no code). */
export class InvalidGuid extends Schema.TaggedError<InvalidGuid>()("InvalidGuid", {
  guid: Schema.String
}) {
  override get message(): string {
    return `Invalid guid [${this.guid}]`
  }
}

/** Every failure of the simulated service. */
export type SimulatorError =
  | DeviceBusy
  | DeviceOffline
  | CancelNotAllowed
  | Forbidden
  | NotFound
  | ValidationFailed
  | BusinessRule
  | InvalidGuid

/** A rendered error: status and JSON body. */
export interface Rendered {
  readonly status: number
  readonly body: unknown
}

const terminalError = (error: number, message: string): Rendered => ({
  status: 400,
  body: { error: { statusCode: 400, name: "BadRequestError", message: { error, message } } }
})

/** Renders an error as spec 7 shows it; `errorGuid` identifies the occurrence. */
export const render = (error: SimulatorError, errorGuid: string): Rendered => {
  switch (error._tag) {
    case "DeviceBusy":
      return terminalError(1001, error.message)
    case "DeviceOffline":
      return terminalError(1002, error.message)
    case "CancelNotAllowed":
      return terminalError(1003, error.message)
    case "Forbidden":
      return {
        status: 403,
        body: { error: { statusCode: 403, name: "ForbiddenError", message: error.message } }
      }
    case "NotFound":
      return {
        status: 404,
        body: { error: { statusCode: 404, name: "NotFoundError", message: error.message } }
      }
    case "ValidationFailed":
      return {
        status: 422,
        body: {
          error: {
            statusCode: 422,
            name: "UnprocessableEntityError",
            message: error.message,
            code: "VALIDATION_FAILED",
            details: {
              errorGuid,
              errorCode: "VALIDATION_FAILED",
              description: error.message,
              httpStatus: 422,
              ...(error.field === undefined ? {} : { field: error.field })
            }
          }
        }
      }
    case "BusinessRule":
      return {
        status: 400,
        body: {
          error: {
            statusCode: 400,
            name: "BadRequestError",
            message: error.message,
            code: error.code,
            details: { errorGuid, errorCode: error.errorCode, description: error.message, httpStatus: 400 }
          }
        }
      }
    case "InvalidGuid":
      return {
        status: 400,
        body: { error: { statusCode: 400, name: "BadRequestError", message: error.message } }
      }
  }
}

/** Shorthand for a business rule failure. */
export const rule = (code: string, message: string, errorCode: string = code): BusinessRule =>
  new BusinessRule({ code, message, errorCode })

/** Shorthand for a validation failure of one field. */
export const invalid = (field: string, message: string): ValidationFailed =>
  new ValidationFailed({ field, message })
