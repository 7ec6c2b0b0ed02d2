/**
 * The console's frame: the navigation, the router (the page is chosen by the URL's hash,
 * `#/executions?status=running`, so every view can be linked and reloaded), and the live
 * connection — server-sent events from `/v1/monitor/live` — which tells the page in view
 * that the log moved, so it refreshes what it shows without a reload.
 *
 * An operator limited to merchants (`GET /console/session` names them) acts for one of them
 * (a chooser when it has several; every request names it, `api.ts`), is offered only the
 * pages it may use (the worker answers them scoped to that merchant), and follows the same live feed, which the server filters to the events
 * of the merchant it acts for (named in the feed's query: an `EventSource` sends no header
 * of its own). As for the platform's operators, a feed that drops says `reconnecting…` and
 * the browser opens it again; nothing is polled.
 */
import { currentSession, type Session } from "./actions.js"
import { actFor, actingFor, get, post } from "./api.js"
import { h, replace } from "./dom.js"
import { chooseZone, type LiveEvent, localZoneName, zone } from "./views.js"

/** What a page hands back: how to (re)load it, and whether a live event concerns it. */
export interface Mounted {
  readonly load: () => Promise<void>
  readonly live?: (event: LiveEvent) => boolean
}

/** A page: mounts itself in `main` for the route's path segments and query. */
export type Page = (main: HTMLElement, route: Route) => Mounted

/** A route: the path after `#/` split on slashes, and the query. */
export interface Route {
  readonly path: ReadonlyArray<string>
  readonly query: URLSearchParams
}

/** The route of the current hash. */
export const currentRoute = (): Route => {
  const hash = window.location.hash.replace(/^#\/?/, "")
  const [path = "", query = ""] = hash.split("?", 2)
  return {
    path: path
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent),
    query: new URLSearchParams(query)
  }
}

/** Goes to a route (keeps history). */
export const navigate = (path: string, query?: URLSearchParams): void => {
  const suffix = query === undefined || query.size === 0 ? "" : `?${query.toString()}`
  window.location.hash = `#/${path}${suffix}`
}

/** The service the worker talks to (`/v1/monitor/service`). */
export interface ServiceInfo {
  readonly kind: "simulator" | "remote"
  readonly terminals: ReadonlyArray<{ readonly serialNumber: string; readonly terminalType: string }>
}

const merchantKey = "tillflow.console.merchant"

/** The merchant a limited operator acts for: the one chosen last in this browser, if still its own, else its first. */
const chosenMerchant = (merchants: ReadonlyArray<string>): string | undefined => {
  let kept: string | null = null
  try {
    kept = window.localStorage.getItem(merchantKey)
  } catch {
    // Storage refused (private mode): its first merchant.
  }
  return kept !== null && merchants.includes(kept) ? kept : merchants[0]
}

const chooseMerchant = (merchant: string): void => {
  try {
    window.localStorage.setItem(merchantKey, merchant)
  } catch {
    // Storage refused: the choice lasts until the page is left.
  }
}

/** The pages in the navigation, in order, each offered when the console has it. */
const navigation: ReadonlyArray<readonly [string, string]> = [
  ["alerts", "Alerts"],
  ["terminals", "Terminals"],
  ["executions", "Executions"],
  ["ledger", "Ledger"],
  ["simulator", "Simulated sale"],
  ["merchants", "Merchants"]
]

/** Starts the console: frame, router and live connection. */
export const start = async (
  pages: (service: ServiceInfo, session: Session | undefined) => Record<string, Page>
): Promise<void> => {
  const app = document.getElementById("app")
  if (app === null) return
  const session = await currentSession()
  const limited = session?.merchants
  if (limited !== undefined) actFor(chosenMerchant(limited))
  // Answered for the merchant acted for when the operator is limited (its own terminals).
  const service = await get<ServiceInfo>("/v1/monitor/service")
  const routes = pages(service, session)
  // The page shown first: the alerts (a limited operator's are its merchant's), else the executions.
  const home = routes["alerts"] === undefined ? "executions" : "alerts"
  const status = h("span", { class: "live-status", id: "live-status", role: "status" }, "connecting…")
  const links = navigation.filter(([path]) => routes[path] !== undefined)
  const nav = h(
    "nav",
    { "aria-label": "Console" },
    h(
      "ul",
      {},
      links.map(([path, label]) => h("li", {}, h("a", { href: `#/${path}`, "data-page": path }, label)))
    )
  )
  // Whom a limited operator acts for: its merchant, or a choice of its merchants.
  const acting =
    limited === undefined
      ? null
      : limited.length === 1
        ? h("span", { class: "acting-for", id: "acting-for" }, `Merchant ${actingFor() ?? ""}`)
        : h(
            "select",
            {
              id: "acting-for",
              "aria-label": "Merchant",
              onchange: (event) => {
                chooseMerchant((event.target as HTMLSelectElement).value)
                // Everything shown was the other merchant's: start again on the executions.
                window.location.hash = "#/executions"
                window.location.reload()
              }
            },
            limited.map((m) => h("option", { value: m, selected: m === actingFor() }, `Merchant ${m}`))
          )
  const logout = h(
    "button",
    {
      type: "button",
      class: "link",
      onclick: () => void post("/console/logout", {}).finally(() => window.location.assign("/console"))
    },
    "Log out"
  )
  const main = h("main", { id: "main", tabindex: "-1" })
  // Times are UTC unless the viewer chooses their own zone; every time shown names its zone.
  const zoneChoice = h(
    "select",
    {
      id: "zone",
      "aria-label": "Time zone",
      onchange: (event) => {
        chooseZone((event.target as HTMLSelectElement).value === "local" ? "local" : "UTC")
        show(false)
      }
    },
    h("option", { value: "UTC", selected: zone() === "UTC" }, "Times in UTC"),
    h("option", { value: "local", selected: zone() === "local" }, `Times in ${localZoneName()}`)
  )
  replace(
    app,
    h(
      "header",
      { class: "top" },
      h("a", { class: "brand", href: `#/${home}` }, "tillflow"),
      nav,
      h("div", { class: "session" }, acting, zoneChoice, status, logout)
    ),
    service.kind === "simulator"
      ? h(
          "p",
          { class: "simulated", role: "note" },
          "SIMULATED: this worker talks to the built-in simulator; no real payment is made."
        )
      : null,
    main
  )

  let mounted: Mounted | undefined
  let timer: number | undefined
  // The last read's failure, shown once above the page (not once per refresh) until a read succeeds.
  let failure: HTMLElement | undefined
  const refresh = () => {
    const current = mounted
    if (current === undefined) return
    void current.load().then(
      () => {
        failure?.remove()
        failure = undefined
      },
      (error: unknown) => {
        failure?.remove()
        failure = h(
          "p",
          { class: "error", role: "alert" },
          error instanceof Error ? error.message : String(error)
        )
        main.prepend(failure)
      }
    )
  }
  const show = (focus: boolean) => {
    const route = currentRoute()
    const name = route.path[0] ?? home
    const page = routes[name] ?? routes[home]
    for (const a of nav.querySelectorAll("a")) {
      if (a.getAttribute("data-page") === name) a.setAttribute("aria-current", "page")
      else a.removeAttribute("aria-current")
    }
    if (page === undefined) return
    mounted = page(main, route)
    refresh()
    // After a navigation, the new page's content is where the keyboard goes on.
    if (focus) main.focus({ preventScroll: true })
  }
  window.addEventListener("hashchange", () => show(true))
  show(false)

  // Live: any stored event may change what the page shows; refresh at most every 250 ms. A
  // limited operator's feed carries its merchant's events only (the server filters it).
  const merchant = actingFor()
  const source = new EventSource(
    merchant === undefined ? "/v1/monitor/live" : `/v1/monitor/live?merchant=${encodeURIComponent(merchant)}`
  )
  source.addEventListener("open", () => {
    status.textContent = "live"
    status.className = "live-status live-on"
  })
  source.addEventListener("error", () => {
    status.textContent = "reconnecting…"
    status.className = "live-status live-off"
  })
  source.addEventListener("log", (message) => {
    const event = JSON.parse((message as MessageEvent<string>).data) as LiveEvent
    if (mounted?.live?.(event) !== true || timer !== undefined) return
    timer = window.setTimeout(() => {
      timer = undefined
      refresh()
    }, 250)
  })
}
