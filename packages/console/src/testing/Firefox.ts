/**
 * Firefox for the console's end-to-end tests: Debian's stock `firefox-esr` at
 * `/usr/bin/firefox-esr` (`TILLFLOW_FIREFOX` names another), driven over WebDriver BiDi by
 * `puppeteer-core` (no browser download), headless, with a fresh profile per launch, removed
 * at close.
 *
 * Why not Playwright: playwright-core 1.65's BiDi Firefox (the `moz-firefox` channel) sends
 * `emulation.setMediaFeaturesOverride` while it creates every context, a command Firefox ESR
 * 153 does not know, so the launch fails; its regular Firefox support needs Playwright's own
 * patched build. Puppeteer drives stock Firefox, ESR included, through the standard protocol.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import puppeteer, { type Browser, type Page } from "puppeteer-core"

/** The browser's executable. */
export const executablePath = process.env["TILLFLOW_FIREFOX"] ?? "/usr/bin/firefox-esr"

/** Whether the browser is installed. */
export const available = (): boolean => fs.existsSync(executablePath)

/** A launched browser: the browser, its first page, and how to close it. */
export interface Launched {
  readonly browser: Browser
  readonly page: Page
  readonly close: () => Promise<void>
}

/** Launches Firefox headless with a fresh profile and the given viewport. */
export const launch = async (
  viewport: { readonly width: number; readonly height: number } = { width: 1280, height: 800 }
): Promise<Launched> => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-firefox-"))
  const browser = await puppeteer.launch({
    browser: "firefox",
    executablePath,
    headless: true,
    userDataDir: profile,
    defaultViewport: { ...viewport },
    // Nothing of the test's machine reaches the network: no updates, telemetry or experiments.
    extraPrefsFirefox: {
      "app.update.enabled": false,
      "datareporting.policy.dataSubmissionEnabled": false,
      "toolkit.telemetry.enabled": false,
      "app.normandy.enabled": false,
      "messaging-system.rsexperimentloader.enabled": false
    }
  })
  const page = (await browser.pages())[0] ?? (await browser.newPage())
  return {
    browser,
    page,
    close: async () => {
      await browser.close()
      fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}
