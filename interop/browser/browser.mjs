// Shared set-up of the browser tests: Debian's chromium, headless, driven by
// playwright-core; a page that records console errors; axe-core on a page.
import fs from 'node:fs'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import assert from 'node:assert/strict'
import { chromium } from 'playwright-core'

const require = createRequire(import.meta.url)
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

export const base = process.env.ATRIUM_URL
if (!base) throw new Error('ATRIUM_URL is not set (interop/suites/95-browser.sh sets it)')

// launch starts chromium without any of its own network traffic: this machine
// reaches no address but loopback.
export async function launch () {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']
  })
}

// newPage opens a page in a fresh context (its own cookies) that records
// console errors, page errors and requests that leave the origin. opts:
// viewport, and timezoneId (an IANA zone the browser runs in).
export async function newPage (browser, opts = {}) {
  const context = await browser.newContext({
    viewport: opts.viewport || { width: 1280, height: 900 }, acceptDownloads: true,
    ...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {})
  })
  const page = await context.newPage()
  page.problems = []
  page.on('console', m => { if (m.type() === 'error') page.problems.push(`console: ${m.text()} (${page.url()})`) })
  page.on('pageerror', e => page.problems.push(`page error: ${e.message} (${page.url()})`))
  page.on('request', r => {
    const u = r.url()
    if (!u.startsWith(base) && !u.startsWith('data:') && !u.startsWith('blob:') && u !== 'about:blank') page.problems.push(`left the origin: ${u}`)
  })
  return page
}

// noProblems asserts the page logged no console error and stayed on its origin.
export function noProblems (page) {
  assert.deepEqual(page.problems, [], 'console errors or requests to other origins')
}

// axe runs axe-core on the page (through the DevTools protocol, which the
// page's Content-Security-Policy does not restrict) and fails on any serious or
// critical violation.
export async function axe (page, what) {
  if (!await page.evaluate(() => !!window.axe)) await page.evaluate(axeSource) // evaluated as a script, not by eval()
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] })
    return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
      .map(v => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`)
  })
  assert.deepEqual(violations, [], `axe-core on ${what}`)
}

// chooseFiles sets the files of a file input as a person picking them would,
// once the page's scripts have run: setInputFiles waits for nothing, and a
// change before the upload script took the input on would be lost (the page
// had just been navigated to).
export async function chooseFiles (locator, files) {
  await locator.page().waitForLoadState('domcontentloaded')
  await locator.setInputFiles(files)
}

// signIn opens path signed in as the pages' person (PAGES_EMAIL, whose
// invitation the suite accepted with PAGES_PASSWORD), through the sign-in page.
export async function signIn (browser, path = '/', opts = {}) {
  return signInAs(browser, process.env.PAGES_EMAIL, process.env.PAGES_PASSWORD, path, opts)
}

// signInAs opens path in a fresh context signed in as email with password,
// through the sign-in page.
export async function signInAs (browser, email, password, path = '/', opts = {}) {
  const page = await newPage(browser, opts)
  await page.goto(base + path)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(u => !u.pathname.startsWith('/signin'))
  return page
}

// mailLink returns the newest link to base + prefix (such as '/invite/') in
// the mails Atrium wrote to the address to (`atrium mail list`), or ''.
export function mailLink (to, prefix = '/invite/') {
  const out = execFileSync(process.env.ATRIUM_BIN, ['mail', 'list', '--data', process.env.ATRIUM_DATA, '--json'], { encoding: 'utf8' })
  const re = new RegExp(base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '[0-9A-Za-z_-]+', 'g')
  const links = JSON.parse(out).filter(m => m.to === to).flatMap(m => m.body.match(re) || [])
  return links.length ? links[links.length - 1] : ''
}

// screenshot saves a picture of the page when SCREENSHOTS names a folder.
export async function screenshot (page, name) {
  if (process.env.SCREENSHOTS) await page.screenshot({ path: `${process.env.SCREENSHOTS}/${name}.png`, fullPage: true })
}
