/**
 * The intake API as the console calls it: same-origin requests that carry the session
 * cookie (the browser adds it; the script never sees it). A 401 means the session ended:
 * back to the login page. An operator limited to merchants names the merchant it acts for
 * in every request (`Tillflow-Merchant`, {@link actFor}); the server checks it is one of its own.
 */

let merchant: string | undefined

/** Makes every request from now on act for `id` (an operator limited to merchants). */
export const actFor = (id: string | undefined): void => {
  merchant = id
}

/** The merchant the console acts for, if the operator is limited to merchants. */
export const actingFor = (): string | undefined => merchant

/** The headers naming the merchant the console acts for (none for the platform's operators). */
export const merchantHeaders = (): Record<string, string> =>
  merchant === undefined ? {} : { "tillflow-merchant": merchant }

/** An answer of the API that was not a success. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
}

const handle = async <A>(response: Response): Promise<A> => {
  if (response.status === 401) {
    window.location.assign("/console")
    throw new ApiError(401, "the session ended: log in again")
  }
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    body = text
  }
  if (!response.ok) {
    const message =
      typeof body === "object" && body !== null && "message" in body && typeof body.message === "string"
        ? body.message
        : `${response.status} ${response.statusText}`
    throw new ApiError(response.status, message)
  }
  return body as A
}

/** GET a path of the API with query parameters (empty ones left out). */
export const get = <A>(path: string, params: Record<string, string | undefined> = {}): Promise<A> => {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== "") query.set(key, value)
  const suffix = query.size === 0 ? "" : `?${query.toString()}`
  return fetch(`${path}${suffix}`, {
    credentials: "same-origin",
    headers: { accept: "application/json", ...merchantHeaders() }
  }).then((r) => handle<A>(r))
}

/** POST JSON to a path of the API. */
export const post = <A>(path: string, body: unknown): Promise<A> =>
  fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "application/json", ...merchantHeaders() },
    body: JSON.stringify(body)
  }).then((r) => handle<A>(r))
