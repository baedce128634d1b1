// The drive's last pieces in a browser: the Favourites view (a file marked in
// its folder shows there, a folder there opens the folder, removing the mark
// removes the row), on a desktop and on a phone; and "Open in editor" with a
// fake WOPI editor. The editor must be configured when Atrium starts, which
// the suite's shared server is not (and its other tests expect no editor):
// this file starts a server of its own (ATRIUM_BIN, a fresh data directory)
// with ATRIUM_EDITOR_URL pointing at a fake editor it serves itself.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import http from 'node:http'
import net from 'node:net'
import { spawn, execFileSync } from 'node:child_process'
import { base, launch, newPage, noProblems, axe, signIn, screenshot, chooseFiles } from './browser.mjs'

let browser
let page
const stamp = Date.now().toString(36)
const favFolder = `Starred ${stamp}`
const favFile = `starred-${stamp}.txt`

before(async () => {
  browser = await launch()
  page = await signIn(browser, '/drive')
})
after(async () => { await browser?.close() })

function row (p, name) {
  return p.locator('#drive-list tbody tr').filter({ has: p.getByText(name, { exact: true }) })
}

async function menuAction (p, name, action) {
  await p.getByRole('button', { name: `Actions for ${name}`, exact: true }).click()
  await p.getByRole('menuitem', { name: action }).click()
}

test('Favourites lists what is marked, from any folder', async () => {
  await page.getByRole('heading', { level: 1, name: 'My files' }).waitFor()
  await page.getByRole('button', { name: 'New folder' }).click()
  const dlg = page.getByRole('dialog', { name: 'New folder' })
  await dlg.getByLabel('Folder name').fill(favFolder)
  await dlg.getByRole('button', { name: 'Create' }).click()
  await row(page, favFolder).waitFor()
  await menuAction(page, favFolder, 'Add to favourites')
  await page.getByRole('status').filter({ hasText: `“${favFolder}” is a favourite.` }).waitFor()

  await page.getByRole('link', { name: favFolder }).click()
  await page.getByRole('heading', { level: 1, name: favFolder }).waitFor()
  await chooseFiles(page.locator('#upload-files'), { name: favFile, mimeType: 'text/plain', buffer: Buffer.from('a favourite') })
  await row(page, favFile).waitFor()
  await menuAction(page, favFile, 'Add to favourites')
  await row(page, favFile).getByText('Favourite', { exact: true }).waitFor()

  const side = page.getByRole('navigation', { name: 'Drive' })
  await side.getByRole('link', { name: 'Favourites' }).click()
  await page.waitForURL(base + '/drive/favorites')
  await page.getByRole('heading', { level: 1, name: 'Favourites' }).waitFor()
  assert.equal(await side.getByRole('link', { name: 'Favourites' }).getAttribute('aria-current'), 'page')
  await row(page, favFolder).waitFor()
  await row(page, favFile).waitFor()
  await screenshot(page, 'drive-favourites')
  await axe(page, 'the favourites')

  // A folder in the list opens the folder.
  await page.getByRole('link', { name: favFolder }).click()
  await page.getByRole('heading', { level: 1, name: favFolder }).waitFor()
  await page.goBack()
  await page.getByRole('heading', { level: 1, name: 'Favourites' }).waitFor()
  noProblems(page)
})

test('Favourites on a phone has no sideways scrolling', async () => {
  const phone = await signIn(browser, '/drive/favorites', { viewport: { width: 390, height: 844 } })
  await phone.getByRole('heading', { level: 1, name: 'Favourites' }).waitFor()
  await row(phone, favFile).waitFor()
  const width = await phone.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 390, `page is ${width} px wide`)
  await screenshot(phone, 'drive-favourites-phone')
  await axe(phone, 'the favourites on a phone')
  noProblems(phone)
  await phone.context().close()
})

test('Remove from favourites takes the row out of the view', async () => {
  for (const name of [favFile, favFolder]) {
    await menuAction(page, name, 'Remove from favourites')
    await page.getByRole('status').filter({ hasText: `“${name}” is no longer a favourite.` }).waitFor()
    await row(page, name).waitFor({ state: 'detached' })
  }
  await page.reload()
  await page.getByRole('heading', { level: 1, name: 'Favourites' }).waitFor()
  assert.equal(await row(page, favFile).count(), 0)
  assert.equal(await row(page, favFolder).count(), 0)
  await page.getByText('No favourites yet.').waitFor()
  noProblems(page)
})

// ---- Open in editor, against a server of this file's own ----

function freePort () {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)) })
    srv.on('error', reject)
  })
}

// fakeEditor serves a WOPI discovery (edit for .txt and .odt) and, at its
// editor URL, a page showing what the form POSTed: the access token's length
// and the file's name, read back from Atrium's CheckFileInfo with that token.
async function fakeEditor () {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const seen = { posts: [] }
  const server = http.createServer((req, res) => {
    if (req.url === '/hosting/discovery') {
      res.writeHead(200, { 'Content-Type': 'text/xml' })
      res.end(`<?xml version="1.0" encoding="utf-8"?><wopi-discovery><net-zone name="external-http"><app name="writer">
<action name="edit" ext="odt" urlsrc="${url}/editor?"/><action name="edit" ext="txt" urlsrc="${url}/editor?"/></app></net-zone></wopi-discovery>`)
      return
    }
    if (req.method === 'POST' && req.url.startsWith('/editor?')) {
      let body = ''
      req.on('data', c => { body += c })
      req.on('end', async () => {
        const form = new URLSearchParams(body)
        const token = form.get('access_token') || ''
        const wopiSrc = new URL(req.url, url).searchParams.get('WOPISrc') || ''
        seen.posts.push({ url: req.url, token, ttl: form.get('access_token_ttl') || '' })
        let name = '(CheckFileInfo failed)'
        try {
          const info = await fetch(wopiSrc + '?access_token=' + encodeURIComponent(token))
          if (info.ok) name = (await info.json()).BaseFileName
        } catch { /* shown as failed */ }
        const esc = t => t.replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
        res.end(`<!doctype html><html lang="en"><title>Fake editor</title><h1>Fake editor</h1>
<p id="token">Received an access_token of ${token.length} characters</p><p id="file">Editing ${esc(name)}</p></html>`)
      })
      return
    }
    res.writeHead(404)
    res.end()
  })
  await new Promise(resolve => server.listen(port, '127.0.0.1', resolve))
  return { url, seen, server }
}

let ed
let own
const editPerson = { email: 'editor.person@browser.test', password: 'editor person password 1' }

// ownAtrium starts Atrium on a fresh data directory with the editor
// configured, and gives it a person with a password and two files.
async function ownAtrium (editorURL) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-editor-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const proc = spawn(process.env.ATRIUM_BIN, ['serve', '--data', dir, '--listen', `127.0.0.1:${port}`],
    { env: { ...process.env, ATRIUM_EDITOR_URL: editorURL, ATRIUM_PUBLIC_URL: url }, stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  proc.stderr.on('data', c => { log += c })
  for (let i = 0; ; i++) {
    try { if ((await fetch(url + '/readyz')).ok) break } catch { /* not yet */ }
    if (i > 100) throw new Error('own atrium did not start: ' + log)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const boot = JSON.parse(execFileSync(process.env.ATRIUM_BIN, ['bootstrap', '--data', dir, '--json', '--org-name', 'Editor Org',
    '--admin-email', editPerson.email, '--public-url', url], { encoding: 'utf8' }))
  const reset = await fetch(`${url}/api/v1/password-resets/${boot.password_url.split('/').pop()}/accept`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ password: editPerson.password })
  })
  assert.equal(reset.status, 200, 'password set')
  const auth = 'Basic ' + Buffer.from(`${boot.email}:${boot.app_password}`).toString('base64')
  for (const [name, body] of [['letter.txt', 'Dear editor'], ['photo.png', 'not an image the editor opens']]) {
    const put = await fetch(`${url}/webdav/${name}`, { method: 'PUT', headers: { Authorization: auth }, body })
    assert.ok(put.status === 201 || put.status === 204, `PUT ${name}: ${put.status}`)
  }
  return { url, dir, proc }
}

// ownPage opens path of the own server signed in. Requests to the own server
// and the editor are this test's doing, not "left the origin".
async function ownPage (p, opts = {}) {
  const page = await newPage(browser, opts)
  page.own = () => page.problems.filter(x => !x.startsWith(`left the origin: ${own.url}`) && !x.startsWith(`left the origin: ${ed.url}`))
  await page.goto(own.url + '/signin?next=' + encodeURIComponent(p))
  await page.getByLabel('Email').fill(editPerson.email)
  await page.getByLabel('Password', { exact: true }).fill(editPerson.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(u => !u.pathname.startsWith('/signin'))
  return page
}

// fitsWindow checks that the editor page does not scroll and its frame
// reaches down to the window's bottom (less the page's margin).
async function fitsWindow (page, what) {
  const m = await page.evaluate(() => ({
    scroll: document.documentElement.scrollHeight - innerHeight,
    gap: innerHeight - document.querySelector('#editor-frame').getBoundingClientRect().bottom
  }))
  assert.ok(m.scroll <= 0, `${what}: the page scrolls by ${m.scroll} px beside the editor`)
  assert.ok(m.gap >= 0 && m.gap <= 24, `${what}: ${m.gap} px between the editor and the window's bottom`)
}

test('Open in editor embeds the editor, the token POSTed, never in a URL', async () => {
  ed = await fakeEditor()
  own = await ownAtrium(ed.url)
  const p = await ownPage('/drive')
  await p.getByRole('heading', { level: 1, name: 'My files' }).waitFor()

  // A file the editor cannot open has no item.
  await p.getByRole('button', { name: 'Actions for photo.png' }).click()
  await p.getByRole('menuitem', { name: 'Download' }).waitFor()
  assert.equal(await p.getByRole('menuitem', { name: 'Open in editor' }).count(), 0)
  await p.keyboard.press('Escape')

  await p.getByRole('button', { name: 'Actions for letter.txt' }).click()
  await axe(p, 'the actions menu with Open in editor')
  await p.getByRole('menuitem', { name: 'Open in editor' }).click()
  await p.waitForURL(u => u.pathname.startsWith('/drive/edit/'))
  await p.getByRole('heading', { level: 1, name: 'letter.txt' }).waitFor()
  const frame = p.frameLocator('iframe[title="Editor for letter.txt"]')
  await frame.getByRole('heading', { name: 'Fake editor' }).waitFor()
  await frame.getByText('Editing letter.txt').waitFor()

  const token = await p.locator('input[name="access_token"]').inputValue()
  assert.ok(token.length > 20, 'a token in the form')
  await frame.getByText(`Received an access_token of ${token.length} characters`).waitFor()
  assert.equal(ed.seen.posts.length, 1)
  assert.equal(ed.seen.posts[0].token, token)
  assert.match(ed.seen.posts[0].ttl, /^\d{13}$/)
  assert.ok(!ed.seen.posts[0].url.includes(token) && !p.url().includes(token), 'the token is in a URL')
  const stored = await p.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage))
  assert.ok(!stored.includes(token), 'the token is in storage')
  await fitsWindow(p, 'the editor page')
  await screenshot(p, 'drive-editor')
  await axe(p, 'the editor page')
  assert.deepEqual(p.own(), [], 'console errors')

  await p.getByRole('link', { name: 'Back' }).click()
  await p.getByRole('heading', { level: 1, name: 'My files' }).waitFor()
  assert.deepEqual(p.own(), [], 'console errors')
})

test('the editor page on a phone has no sideways scrolling, nor a page scrolling beside the editor', async () => {
  const phone = await ownPage('/drive', { viewport: { width: 390, height: 844 } })
  await phone.getByRole('button', { name: 'Actions for letter.txt' }).click()
  await phone.getByRole('menuitem', { name: 'Open in editor' }).click()
  await phone.frameLocator('iframe[name="editor-frame"]').getByRole('heading', { name: 'Fake editor' }).waitFor()
  const width = await phone.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 390, `page is ${width} px wide`)
  await fitsWindow(phone, 'the editor page on a phone')
  await screenshot(phone, 'drive-editor-phone')
  await axe(phone, 'the editor page on a phone')
  assert.deepEqual(phone.own(), [], 'console errors')
  await phone.context().close()
})

after(async () => {
  if (own) {
    if (own.proc.exitCode === null) {
      const exited = new Promise(resolve => own.proc.once('exit', resolve))
      own.proc.kill('SIGTERM')
      await exited
    }
    fs.rmSync(own.dir, { recursive: true, force: true })
  }
  if (ed) ed.server.close()
})
