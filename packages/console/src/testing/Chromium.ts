/**
 * Chromium driven by Playwright (`playwright-core`, no browser download) for the console's
 * end-to-end tests and its benchmark: Debian's `chromium` package at `/usr/bin/chromium`
 * (`TILLFLOW_CHROMIUM` names another), headless, with a fresh profile per launch, removed
 * at close.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type BrowserContext, chromium } from "playwright-core"

/** The browser's executable. */
export const executablePath = process.env["TILLFLOW_CHROMIUM"] ?? "/usr/bin/chromium"

/** Launch flags that work in containers and on CI machines without a GPU or network. */
export const args: ReadonlyArray<string> = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** Whether the browser is installed. */
export const available = (): boolean => fs.existsSync(executablePath)

/** A launched browser: its context (one profile) and how to close it. */
export interface Launched {
  readonly context: BrowserContext
  readonly close: () => Promise<void>
}

/** Launches Chromium with a fresh profile (`--user-data-dir`) and the given viewport. */
export const launch = async (
  viewport: { readonly width: number; readonly height: number } = { width: 1280, height: 800 }
): Promise<Launched> => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [...args],
    viewport,
    acceptDownloads: true
  })
  return {
    context,
    close: async () => {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}
