// The drive page in a browser (run by bench/webapp.sh, which starts the server
// and makes the person): fills a folder with ITEMS items over the REST API,
// then loads /drive/{id} RUNS times in chromium and prints the navigation
// timing's median, and the weight of the page's assets; then fills a folder of
// BIG_ITEMS items over WebDAV and times its first page, a change of sort and
// the next page (median of RUNS each).
import { createRequire } from 'node:module'
import { gzipSync } from 'node:zlib'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(path.join(here, '../interop/browser/package.json'))
const { chromium } = require('playwright-core')

const { BASE, TOKEN, EMAIL, PASSWORD } = process.env
const ITEMS = Number(process.env.ITEMS || 1000)
const RUNS = Math.max(1, Number(process.env.RUNS || 5))
const BIG_ITEMS = Number(process.env.BIG_ITEMS ?? 10000)
const STEP_MS = 1000
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

// median of the finite values of xs (a figure a run could not take is NaN and
// left out); NaN when there is none.
function median (xs) {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b)
  if (!s.length) return NaN
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
function ms (v) { return Number.isFinite(v) ? `${v.toFixed(0)} ms` : 'n/a' }
// fillDAV makes n items in the folder at davPath over WebDAV (one PUT per
// file, one MKCOL per folder: a third of the requests of the REST upload),
// sixteen at a time: a tenth folders, the rest small files.
async function fillDAV (davPath, n) {
  let next = 0
  const dav = BASE + '/api/v1/webdav/' + davPath.split('/').map(encodeURIComponent).join('/') + '/'
  async function worker () {
    while (next < n) {
      const i = next++
      const name = `item ${String(i).padStart(5, '0')}`
      const folder = i % 10 === 0
      const res = await fetch(dav + encodeURIComponent(folder ? name : name + '.txt'), {
        method: folder ? 'MKCOL' : 'PUT',
        headers: { Authorization: 'Bearer ' + TOKEN, 'Content-Type': 'text/plain' },
        body: folder ? undefined : `content of ${name}\n`.repeat(1 + (i % 50))
      })
      if (!res.ok) throw new Error(`${folder ? 'MKCOL' : 'PUT'} ${name}: ${res.status} ${await res.text()}`)
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
}

function line (label, value, target, ok) {
  // At least two spaces after the label: bench/report.py splits on them.
  const l = (label.length > 50 ? label + '  ' : label.padEnd(52)) + String(value).padEnd(24)
  console.log(target === undefined ? l : `${l} target ${String(target).padEnd(10)} ${ok ? 'PASS' : 'MISS'}`)
}

const folder = await api('POST', '/drive/folders', { name: `Bench ${ITEMS} items` })
const t0 = Date.now()
await fill(folder.id, ITEMS)
line(`made a folder of ${ITEMS} items over REST`, `${((Date.now() - t0) / 1000).toFixed(1)} s`)
let big = null
if (BIG_ITEMS > 0) {
  big = await api('POST', '/drive/folders', { name: `Bench ${BIG_ITEMS} items` })
  const t1 = Date.now()
  await fillDAV(big.name, BIG_ITEMS)
  line(`made a folder of ${BIG_ITEMS} items over WebDAV`, `${((Date.now() - t1) / 1000).toFixed(1)} s`)
}

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
    return timing(rows)
  }
  // timing waits for the list's last row and returns the current
  // navigation's timing. The paint entry is recorded a moment after the
  // paint: it is awaited (its absence was the NaN of RUNS=1), up to 5 s.
  async function timing (rows = '#drive-list tbody tr') {
    await page.locator(rows).last().waitFor()
    await page.waitForLoadState('load')
    return page.evaluate(async () => {
      const n = performance.getEntriesByType('navigation')[0]
      const fcp = await new Promise(resolve => {
        const e = performance.getEntriesByName('first-contentful-paint')[0]
        if (e) return resolve(e.startTime)
        const o = new PerformanceObserver(l => {
          const x = l.getEntriesByName('first-contentful-paint')[0]
          if (x) { o.disconnect(); resolve(x.startTime) }
        })
        o.observe({ type: 'paint', buffered: true })
        setTimeout(() => { o.disconnect(); resolve(NaN) }, 5000)
      })
      return { ttfb: n.responseStart, html: n.responseEnd, dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, fcp, rows: document.querySelectorAll('#drive-list tbody tr').length }
    })
  }
  // step goes from url by clicking what selector names (a sort header, the
  // next page), RUNS times after a warm-up, and returns the runs' timings:
  // fcp counts from the click's navigation start; wall from the click to the
  // new list's last row.
  async function step (url, selector) {
    const runs = []
    for (let i = 0; i <= RUNS; i++) {
      await page.goto(url, { waitUntil: 'load' })
      await page.locator('#drive-list tbody tr').last().waitFor()
      const before = page.url()
      const t = Date.now()
      await page.locator(selector).first().click()
      await page.waitForURL(u => u.toString() !== before, { waitUntil: 'commit' })
      const r = await timing()
      r.wall = Date.now() - t
      if (i > 0) runs.push(r)
    }
    return runs
  }
  // A baseline on this machine now: the settings page, a light page of the
  // same layout and styles.
  {
    await load(BASE + '/settings', 'main h1')
    const runs = []
    for (let i = 0; i < RUNS; i++) runs.push(await load(BASE + '/settings', 'main h1'))
    line(`baseline /settings: first contentful paint (median)`, ms(median(runs.map(r => r.fcp))))
    line(`baseline /settings: DOMContentLoaded end (median)`, ms(median(runs.map(r => r.dcl))))
  }
  for (const [label, q] of [['default page (100 rows)', ''], ['per_page=500', '?per_page=500']]) {
    const url = `${BASE}/drive/${folder.id}${q}`
    await load(url) // warm
    const runs = []
    for (let i = 0; i < RUNS; i++) runs.push(await load(url))
    const m = k => median(runs.map(r => r[k]))
    line(`/drive/{id}, ${label}: rows shown`, runs[0].rows)
    line(`  time to first byte (median of ${RUNS})`, ms(m('ttfb')))
    line(`  HTML received (responseEnd)`, ms(m('html')))
    line(`  list parsed, script run (DOMContentLoaded end)`, ms(m('dcl')))
    line(`${ITEMS} items, ${label}: list shown (FCP, median of ${RUNS})`, ms(m('fcp')), `< ${LIST_MS} ms`, m('fcp') < LIST_MS)
    line(`  load event end`, ms(m('load')))
  }

  // A folder of BIG_ITEMS items stays responsive: its first page, a change
  // of sort (the Size header) and the next page each show in < STEP_MS.
  if (big) {
    const url = `${BASE}/drive/${big.id}`
    await load(url) // warm
    const first = []
    for (let i = 0; i < RUNS; i++) first.push(await load(url))
    const sort = await step(url, '#drive-list th.col-size a')
    const next = await step(url, '#drive-list a[rel=next]')
    const n = BIG_ITEMS.toLocaleString('en')
    line(`/drive/{id} of ${n} items: rows shown`, first[0].rows)
    for (const [label, runs] of [['first page', first], ['sort by size', sort], ['next page', next]]) {
      const f = median(runs.map(r => r.fcp))
      line(`${n} items, ${label}: list shown (FCP, median of ${RUNS})`, ms(f), `< ${STEP_MS} ms`, f < STEP_MS)
      if (runs[0].wall !== undefined) line(`${n} items, ${label}: click to last row shown (median)`, ms(median(runs.map(r => r.wall))))
      line(`  ${label}: time to first byte (median)`, ms(median(runs.map(r => r.ttfb))))
    }
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
