// The drive page in a browser (run by bench/webapp.sh, which starts the server
// and makes the person): fills a folder with ITEMS items over the REST API,
// then loads /drive/{id} RUNS times in chromium and prints the navigation
// timing's median, and the weight of the page's assets.
import { createRequire } from 'node:module'
import { gzipSync } from 'node:zlib'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(path.join(here, '../interop/browser/package.json'))
const { chromium } = require('playwright-core')

const { BASE, TOKEN, EMAIL, PASSWORD } = process.env
const ITEMS = Number(process.env.ITEMS || 1000)
const RUNS = Number(process.env.RUNS || 5)
const LIST_MS = 500
const ASSETS_KB = 300

async function api (method, p, body) {
  const res = await fetch(BASE + '/api/v1' + p, {
    method,
    headers: { Authorization: 'Bearer ' + TOKEN, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

// fill makes n items in folder: a tenth folders, the rest small files
// (announce, PUT, confirm), eight at a time.
async function fill (folder, n) {
  let next = 0
  async function worker () {
    while (next < n) {
      const i = next++
      const name = `item ${String(i).padStart(5, '0')}`
      if (i % 10 === 0) {
        await api('POST', '/drive/folders', { name, parent_id: folder })
        continue
      }
      const bytes = Buffer.from(`content of ${name}\n`.repeat(1 + (i % 50)))
      const t = await api('POST', '/drive/upload', { name: name + '.txt', size: bytes.length, mime_type: 'text/plain', parent_id: folder })
      const put = await fetch(t.upload_url, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: bytes })
      if (!put.ok) throw new Error(`PUT ${name}: ${put.status}`)
      await api('POST', `/drive/${(t.file && t.file.id) || t.file_id}/confirm`)
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
}

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
function line (label, value, target, ok) {
  const l = label.padEnd(52) + String(value).padEnd(24)
  console.log(target === undefined ? l : `${l} target ${String(target).padEnd(10)} ${ok ? 'PASS' : 'MISS'}`)
}

const folder = await api('POST', '/drive/folders', { name: `Bench ${ITEMS} items` })
const t0 = Date.now()
await fill(folder.id, ITEMS)
line(`made a folder of ${ITEMS} items over REST`, `${((Date.now() - t0) / 1000).toFixed(1)} s`)

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']
})
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  await page.goto(BASE + '/signin')
  await page.getByLabel('Email').fill(EMAIL)
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(u => !u.pathname.startsWith('/signin'))

  // load loads url and returns, once the list's last row is there, the
  // navigation's timing (ms from its start). The list is in the HTML: its
  // first contentful paint is when it shows.
  async function load (url, rows = '#drive-list tbody tr') {
    await page.goto(url, { waitUntil: 'load' })
    await page.locator(rows).last().waitFor()
    return page.evaluate(() => {
      const n = performance.getEntriesByType('navigation')[0]
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]
      return { ttfb: n.responseStart, html: n.responseEnd, dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, fcp: fcp ? fcp.startTime : NaN, rows: document.querySelectorAll('#drive-list tbody tr').length }
    })
  }
  // A baseline on this machine now: the settings page, a light page of the
  // same layout and styles.
  {
    await load(BASE + '/settings', 'main h1')
    const runs = []
    for (let i = 0; i < RUNS; i++) runs.push(await load(BASE + '/settings', 'main h1'))
    line(`baseline /settings: first contentful paint (median)`, `${median(runs.map(r => r.fcp)).toFixed(0)} ms`)
    line(`baseline /settings: DOMContentLoaded end (median)`, `${median(runs.map(r => r.dcl)).toFixed(0)} ms`)
  }
  for (const [label, q] of [['default page (100 rows)', ''], ['per_page=500', '?per_page=500']]) {
    const url = `${BASE}/drive/${folder.id}${q}`
    await load(url) // warm
    const runs = []
    for (let i = 0; i < RUNS; i++) runs.push(await load(url))
    const m = k => median(runs.map(r => r[k])).toFixed(0)
    line(`/drive/{id}, ${label}: rows shown`, runs[0].rows)
    line(`  time to first byte (median of ${RUNS})`, `${m('ttfb')} ms`)
    line(`  HTML received (responseEnd)`, `${m('html')} ms`)
    line(`  list parsed, script run (DOMContentLoaded end)`, `${m('dcl')} ms`)
    line(`  list shown (first contentful paint)`, `${m('fcp')} ms`, `< ${LIST_MS} ms`, Number(m('fcp')) < LIST_MS)
    line(`  load event end`, `${m('load')} ms`)
  }

  // The weight of the first page's assets: every response of a fresh load.
  const bodies = []
  const fresh = await context.newPage()
  fresh.on('response', async r => {
    if (!r.url().startsWith(BASE)) return
    try { bodies.push({ url: r.url(), body: await r.body() }) } catch { /* redirect: no body */ }
  })
  await fresh.goto(`${BASE}/drive/${folder.id}`, { waitUntil: 'networkidle' })
  let raw = 0
  let gz = 0
  for (const b of bodies) {
    const g = gzipSync(b.body, { level: 6 }).length
    raw += b.body.length
    gz += g
    line(`  ${new URL(b.url).pathname.replace(folder.id, '{id}')}`, `${(b.body.length / 1024).toFixed(1)} KB, gzip ${(g / 1024).toFixed(1)} KB`)
  }
  line(`first page's assets (${bodies.length} responses), uncompressed`, `${(raw / 1024).toFixed(1)} KB`)
  line(`first page's assets, gzip-compressed`, `${(gz / 1024).toFixed(1)} KB`, `<= ${ASSETS_KB} KB`, gz <= ASSETS_KB * 1024)
} finally {
  await browser.close()
}
