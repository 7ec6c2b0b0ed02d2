/**
 * The console's frame: the navigation, the router (the page is chosen by the URL's hash,
 * `#/executions?status=running`, so every view can be linked and reloaded), and the live
 * connection — server-sent events from `/v1/monitor/live` — which tells the page in view
 * that the log moved, so it refreshes what it shows without a reload.
 */
import { currentSession } from "./actions.js"
import { get, post } from "./api.js"
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

/** Starts the console: frame, router and live connection. */
export const start = async (
  pages: (service: ServiceInfo, role: "viewer" | "operator" | "admin" | undefined) => Record<string, Page>
): Promise<void> => {
  const app = document.getElementById("app")
  if (app === null) return
  const [service, session] = await Promise.all([get<ServiceInfo>("/v1/monitor/service"), currentSession()])
  const routes = pages(service, session?.role)
  const status = h("span", { class: "live-status", id: "live-status", role: "status" }, "connecting…")
  const links: Array<[string, string]> = [
    ["alerts", "Alerts"],
    ["terminals", "Terminals"],
    ["executions", "Executions"],
    ["ledger", "Ledger"],
    ...(service.kind === "simulator" ? ([["simulator", "Simulated sale"]] as Array<[string, string]>) : []),
    // An admin's page: offered when the session's role has it.
    ...(routes["merchants"] === undefined ? [] : ([["merchants", "Merchants"]] as Array<[string, string]>))
  ]
  const nav = h(
    "nav",
    { "aria-label": "Console" },
    h(
      "ul",
      {},
      links.map(([path, label]) => h("li", {}, h("a", { href: `#/${path}`, "data-page": path }, label)))
    )
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
      h("a", { class: "brand", href: "#/alerts" }, "tillflow"),
      nav,
      h("div", { class: "session" }, zoneChoice, status, logout)
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
  const refresh = () => {
    const current = mounted
    if (current === undefined) return
    current.load().catch((error: unknown) => {
      main.prepend(
        h("p", { class: "error", role: "alert" }, error instanceof Error ? error.message : String(error))
      )
    })
  }
  const show = (focus: boolean) => {
    const route = currentRoute()
    const name = route.path[0] ?? "alerts"
    const page = routes[name] ?? routes["alerts"]
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

  // Live: any stored event may change what the page shows; refresh at most every 250 ms.
  const source = new EventSource("/v1/monitor/live")
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
