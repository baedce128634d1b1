// The drive's pages in a browser: a person makes a folder, uploads into it over
// tus (surviving a dropped connection), shares the file by link (opened by a
// browser without cookies), renames it, trashes it and finds it in the trash,
// and searches; every view passes axe-core, on a desktop and on a phone.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { base, launch, newPage, noProblems, axe, signIn, signInAs, screenshot, chooseFiles } from './browser.mjs'

let browser
let page
const stamp = Date.now().toString(36)
const folder = `Folder ${stamp}`
const fileName = `notes-${stamp}.txt`
const renamed = `renamed-${stamp}.txt`
const content = 'The quick brown zeppelin ' + stamp + '\n' + 'x'.repeat(300 * 1024)

before(async () => {
  browser = await launch()
  page = await signIn(browser, '/')
})
after(async () => { await browser?.close() })

function row (name) {
  return page.locator('#drive-list tbody tr').filter({ has: page.getByText(name, { exact: true }) })
}

test('signed in, / opens the files with storage, shared and trash', async () => {
  await page.waitForURL(base + '/drive')
  await page.getByRole('heading', { level: 1, name: 'My files' }).waitFor()
  const side = page.getByRole('navigation', { name: 'Drive' })
  await side.getByRole('link', { name: 'Shared with me' }).waitFor()
  await side.getByRole('link', { name: 'Trash' }).waitFor()
  assert.match(await page.locator('#drive-storage').innerText(), /used/)
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).waitFor()
  await axe(page, 'the drive root')
  noProblems(page)
})

test('New folder makes a folder that opens with breadcrumbs', async () => {
  await page.getByRole('button', { name: 'New folder' }).click()
  const dlg = page.getByRole('dialog', { name: 'New folder' })
  await axe(page, 'the new folder dialog')
  await dlg.getByLabel('Folder name').fill(folder)
  await dlg.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('link', { name: folder }).click()
  await page.getByRole('heading', { level: 1, name: folder }).waitFor()
  const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' })
  await crumbs.getByRole('link', { name: 'My files' }).waitFor()
  assert.equal(await crumbs.getByRole('link', { name: folder }).getAttribute('aria-current'), 'page')
  await axe(page, 'an empty folder')
  noProblems(page)
})

test('a file uploads over tus into the folder and resumes after a dropped PATCH', async () => {
  // The first PATCH is cut off; tus-js-client asks the offset (HEAD) and resumes.
  let patches = 0
  let heads = 0
  page.on('request', r => { if (r.url().includes('/api/v1/drive/tus/') && r.method() === 'HEAD') heads++ })
  await page.route('**/api/v1/drive/tus/*', async route => {
    if (route.request().method() === 'PATCH' && patches++ === 0) return route.abort('connectionreset')
    return route.continue()
  })
  await chooseFiles(page.locator('input[type=file]').first(), { name: fileName, mimeType: 'text/plain', buffer: Buffer.from(content) })
  const up = page.getByRole('region', { name: 'Uploads' })
  await up.getByText('Uploaded', { exact: true }).waitFor()
  await page.unroute('**/api/v1/drive/tus/*')
  assert.ok(patches >= 2, `PATCH requests: ${patches}`)
  assert.ok(heads >= 1, `HEAD requests after the dropped PATCH: ${heads}`)
  // A failed request is a console error in Chromium; it is the test's own doing.
  page.problems = page.problems.filter(p => !p.includes('net::ERR_CONNECTION_RESET') && !p.includes('ERR_FAILED'))
  const r = row(fileName)
  await r.waitFor()
  assert.match(await r.innerText(), /307 KB/)
  await screenshot(page, 'drive-folder')
  await axe(page, 'a folder with an upload')
  noProblems(page)
})

test('a small file goes up in one request: its bytes with the upload\'s creation', async () => {
  const small = `small-${stamp}.txt`
  const seen = []
  const watch = r => { if (r.url().includes('/api/v1/drive/tus')) seen.push(r.method() + ' ' + (r.headers()['content-type'] ?? '')) }
  page.on('request', watch)
  await chooseFiles(page.locator('input[type=file]').first(), { name: small, mimeType: 'text/plain', buffer: Buffer.from('tiny words') })
  await row(small).waitFor()
  page.off('request', watch)
  assert.deepEqual(seen, ['POST application/offset+octet-stream'])
  assert.match(await row(small).innerText(), /10 B/)
  noProblems(page)
})

test('the same name again offers skip, rename and overwrite', async () => {
  await chooseFiles(page.locator('input[type=file]').first(), { name: fileName, mimeType: 'text/plain', buffer: Buffer.from('again') })
  const dlg = page.getByRole('dialog', { name: `“${fileName}” already exists` })
  await dlg.waitFor()
  await axe(page, 'the name conflict dialog')
  await dlg.getByRole('button', { name: 'Rename' }).click()
  await page.getByRole('region', { name: 'Uploads' }).getByText(/Uploaded as/).waitFor()
  await row(fileName.replace('.txt', ' (1).txt')).waitFor()
  noProblems(page)
})

test('Preview shows a text file; an overwrite makes a version that restores', async () => {
  const second = fileName.replace('.txt', ' (1).txt')
  await chooseFiles(page.locator('input[type=file]').first(), { name: second, mimeType: 'text/plain', buffer: Buffer.from('third words') })
  const conflict = page.getByRole('dialog', { name: `“${second}” already exists` })
  await conflict.getByRole('button', { name: 'Overwrite' }).click()
  await page.getByRole('region', { name: 'Uploads' }).getByText('Uploaded as a new version').waitFor()

  await page.getByRole('button', { name: `Actions for ${second}` }).click()
  await page.getByRole('menuitem', { name: 'Preview' }).click()
  const view = page.getByRole('dialog', { name: second })
  await view.getByText('third words').waitFor()
  await axe(page, 'the text viewer')
  await view.getByRole('button', { name: 'Close' }).click()

  await page.getByRole('button', { name: `Actions for ${second}` }).click()
  await page.getByRole('menuitem', { name: 'Versions' }).click()
  const versions = page.getByRole('dialog', { name: `Versions of “${second}”` })
  await versions.getByRole('button', { name: 'Restore version 1' }).click()
  await page.getByRole('status').filter({ hasText: `Version 1 of “${second}” is restored.` }).waitFor()
  await versions.getByRole('button', { name: 'Restore version 2' }).waitFor()
  const [old] = await Promise.all([page.waitForEvent('download'), versions.getByRole('button', { name: 'Download version 2' }).click()])
  assert.equal(old.suggestedFilename(), second)
  assert.equal(fs.readFileSync(await old.path(), 'utf8'), 'third words')
  await axe(page, 'the versions dialog')
  await versions.getByRole('button', { name: 'Close' }).click()
  noProblems(page)
})

test('a whole folder uploads through the folder picker, its tree kept', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-drive-'))
  const top = path.join(dir, `album-${stamp}`)
  fs.mkdirSync(path.join(top, 'deep'), { recursive: true })
  fs.writeFileSync(path.join(top, 'a.txt'), 'first')
  fs.writeFileSync(path.join(top, 'deep', 'b.txt'), 'second')
  await chooseFiles(page.locator('#upload-folder'), top)
  await page.getByRole('status').filter({ hasText: 'Uploads finished.' }).waitFor()
  await page.getByRole('link', { name: `album-${stamp}` }).click()
  await page.getByRole('heading', { level: 1, name: `album-${stamp}` }).waitFor()
  await page.getByRole('link', { name: 'a.txt' }).waitFor()
  await page.getByRole('link', { name: 'deep' }).click()
  await page.getByRole('link', { name: 'b.txt' }).waitFor()
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: folder }).click()
  await page.getByRole('heading', { level: 1, name: folder }).waitFor()
  fs.rmSync(dir, { recursive: true, force: true })
  noProblems(page)
})

test('the grid view shows thumbnails of images; Preview shows the image', async () => {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
  const image = `pixel-${stamp}.png`
  await chooseFiles(page.locator('input[type=file]').first(), { name: image, mimeType: 'image/png', buffer: png })
  await row(image).waitFor()
  const toggle = page.getByRole('button', { name: 'Grid view' })
  await toggle.click()
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true')
  await row(image).locator('img.thumb').waitFor()
  await screenshot(page, 'drive-grid')
  await axe(page, 'the grid view')
  await toggle.click()
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false')

  await page.getByRole('button', { name: `Actions for ${image}` }).click()
  await page.getByRole('menuitem', { name: 'Preview' }).click()
  const view = page.getByRole('dialog', { name: image })
  const img = view.getByRole('img', { name: image })
  await img.waitFor()
  await page.waitForFunction(name => { const i = document.querySelector('#view-body img'); return i && i.complete && i.naturalWidth > 0 }, image)
  await view.getByRole('button', { name: 'Close' }).click()
  noProblems(page)
})

// tinyPdf is a valid PDF of one page per text (Helvetica, not embedded).
function tinyPdf (texts) {
  const objs = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>']
  const kids = []
  for (const t of texts) {
    const pageNo = objs.length + 1
    kids.push(`${pageNo} 0 R`)
    const stream = `BT /F1 28 Tf 30 90 Td (${t}) Tj ET`
    objs.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageNo + 1} 0 R >>`)
    objs.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`)
  }
  objs[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${texts.length} >>`
  let out = '%PDF-1.4\n'
  const offsets = objs.map((o, i) => { const at = out.length; out += `${i + 1} 0 obj\n${o}\nendobj\n`; return at })
  const xref = out.length
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n` + offsets.map(o => String(o).padStart(10, '0') + ' 00000 n \n').join('')
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}

test('Preview shows a PDF page by page (pdf.js, loaded only then)', async () => {
  const name = `leaflet-${stamp}.pdf`
  const loaded = []
  page.on('request', r => { if (r.url().includes('/assets/vendor/pdf')) loaded.push(r.url()) })
  await chooseFiles(page.locator('input[type=file]').first(), { name, mimeType: 'application/pdf', buffer: tinyPdf(['First page', 'Second page']) })
  await row(name).waitFor()
  assert.deepEqual(loaded, [], 'pdf.js loads with the page')
  await page.getByRole('button', { name: `Actions for ${name}` }).click()
  await page.getByRole('menuitem', { name: 'Preview' }).click()
  const view = page.getByRole('dialog', { name })
  await view.getByText('Page 1 of 2').waitFor()
  await view.locator('canvas.pdf-page[data-page="1"]').waitFor()
  assert.ok(loaded.some(u => u.endsWith('/pdf.min.mjs')) && loaded.some(u => u.endsWith('/pdf.worker.min.mjs')), `loaded ${loaded}`)
  // Page 1 is drawn: the canvas has dark pixels (the text) on white.
  const dark = await page.evaluate(() => {
    const c = document.querySelector('canvas.pdf-page')
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data
    let n = 0
    for (let i = 0; i < d.length; i += 4) if (d[i] < 100 && d[i + 3] > 200) n++
    return n
  })
  assert.ok(dark > 50, `dark pixels on page 1: ${dark}`)
  assert.equal(await view.getByRole('button', { name: 'Previous page' }).isDisabled(), true)
  await screenshot(page, 'drive-pdf')
  await axe(page, 'the PDF viewer')
  await view.getByRole('button', { name: 'Next page' }).click()
  await view.getByText('Page 2 of 2').waitFor()
  await view.locator('canvas.pdf-page[data-page="2"]').waitFor()
  // The disabled Next hands the focus to Previous; the keyboard turns pages.
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Previous page')
  await view.locator('.pdf-sheet').focus()
  await page.keyboard.press('ArrowLeft')
  await view.getByText('Page 1 of 2').waitFor()
  await view.getByRole('button', { name: 'Close' }).click()
  noProblems(page)
})

test('Download of a folder saves it as a ZIP archive', async () => {
  const album = `album-${stamp}`
  await page.getByRole('button', { name: `Actions for ${album}` }).click()
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('menuitem', { name: 'Download' }).click()
  ])
  assert.equal(download.suggestedFilename(), `${album}.zip`)
  const file = await download.path()
  const bytes = fs.readFileSync(file)
  assert.equal(bytes.subarray(0, 2).toString('latin1'), 'PK')
  for (const entry of [`${album}/a.txt`, `${album}/deep/b.txt`]) assert.ok(bytes.includes(Buffer.from(entry)), `no ${entry} in the archive`)
  noProblems(page)
})

test('Share → Create link gives a link that opens without an account', async () => {
  await page.getByRole('button', { name: `Actions for ${fileName}`, exact: true }).click()
  const menu = page.getByRole('menu')
  for (const name of ['Download', 'Share', 'Rename', 'Move', 'Delete']) await menu.getByRole('menuitem', { name }).waitFor()
  await axe(page, 'the actions menu')
  await menu.getByRole('menuitem', { name: 'Share' }).click()
  const dlg = page.getByRole('dialog', { name: `Share “${fileName}”` })
  await dlg.getByRole('button', { name: 'Create link' }).click()
  const field = dlg.getByLabel('Share link')
  await field.waitFor()
  const link = await field.inputValue()
  assert.match(link, /\/s\//)
  await dlg.getByRole('listitem').filter({ hasText: link }).waitFor()
  await screenshot(page, 'drive-share')
  await axe(page, 'the share dialog')
  await dlg.getByRole('button', { name: 'Done' }).click()

  const anon = await newPage(browser)
  await anon.goto(link)
  await anon.getByRole('heading', { name: fileName }).waitFor()
  await anon.context().close()
  noProblems(page)
})

test('Share → with a team and with everyone; the admin sees what the team has', async () => {
  const team = `Designers ${stamp}`
  const res = await fetch(`${base}/api/v1/partner/orgs/${process.env.BR_ORG}/teams`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${process.env.ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: team })
  })
  assert.equal(res.status, 201, await res.text())

  await page.getByRole('button', { name: `Actions for ${fileName}`, exact: true }).click()
  await page.getByRole('menu').getByRole('menuitem', { name: 'Share' }).click()
  const dlg = page.getByRole('dialog', { name: `Share “${fileName}”` })
  await dlg.getByLabel('Share with', { exact: true }).selectOption('team')
  await dlg.getByLabel('Team', { exact: true }).selectOption({ label: team })
  await dlg.getByLabel('May').selectOption('edit')
  await dlg.getByRole('button', { name: 'Share', exact: true }).click()
  await dlg.getByRole('listitem').filter({ hasText: `Team ${team} (can edit)` }).waitFor()
  await dlg.getByLabel('Share with', { exact: true }).selectOption('organization')
  await dlg.getByLabel('May').selectOption('view')
  assert.equal(await dlg.getByLabel('Team', { exact: true }).isVisible(), false)
  await dlg.getByRole('button', { name: 'Share', exact: true }).click()
  await dlg.getByRole('listitem').filter({ hasText: 'Everyone in the organisation (can view)' }).waitFor()
  await axe(page, 'the share dialog with a team and the organisation')
  await dlg.getByRole('button', { name: 'Done' }).click()

  const admin = await signInAs(browser, process.env.ADMIN_EMAIL, process.env.ADMIN_PASSWORD, '/admin/teams')
  await admin.getByRole('button', { name: `Members of ${team}` }).click()
  const shared = admin.getByRole('list', { name: 'Shared with this team' })
  await shared.getByText(fileName, { exact: true }).waitFor()
  assert.match(await shared.innerText(), /can edit/)
  await axe(admin, 'the teams page with what a team has')
  noProblems(admin)
  await admin.context().close()
  noProblems(page)
})

test('Search files finds text inside documents, highlighted', async () => {
  await page.getByLabel('Search files').fill('zeppelin')
  await page.getByLabel('Search files').press('Enter')
  await page.waitForURL(u => u.pathname === '/drive/search' && u.searchParams.get('q') === 'zeppelin')
  await page.getByRole('link', { name: fileName, exact: true }).waitFor()
  assert.equal(await page.locator('#drive-list mark').first().innerText(), 'zeppelin')
  await screenshot(page, 'drive-search')
  await axe(page, 'search results')
  await page.goBack()
  await page.getByRole('heading', { level: 1, name: folder }).waitFor()
  noProblems(page)
})

test('rename, then delete to the trash', async () => {
  await page.getByRole('button', { name: `Actions for ${fileName}`, exact: true }).click()
  await page.getByRole('menuitem', { name: 'Rename' }).click()
  const dlg = page.getByRole('dialog', { name: `Rename “${fileName}”` })
  await dlg.getByLabel('New name').fill(renamed)
  await dlg.getByRole('button', { name: 'Rename' }).click()
  await row(renamed).waitFor()
  assert.equal(await row(fileName).count(), 0)

  await page.getByRole('button', { name: `Actions for ${renamed}` }).click()
  await page.getByRole('menuitem', { name: 'Delete' }).click()
  const confirm = page.getByRole('dialog', { name: `Move “${renamed}” to the trash?` })
  await axe(page, 'the delete confirmation')
  await confirm.getByRole('button', { name: 'Move to trash' }).click()
  await row(renamed).waitFor({ state: 'detached' })

  await page.getByRole('navigation', { name: 'Drive' }).getByRole('link', { name: 'Trash' }).click()
  await page.getByRole('heading', { level: 1, name: 'Trash' }).waitFor()
  await row(renamed).waitFor()
  await screenshot(page, 'drive-trash')
  await axe(page, 'the trash')
  await page.reload()
  await row(renamed).waitFor()
  noProblems(page)
})

test('Shared with me is a view of its own', async () => {
  await page.goto(base + '/drive/shared')
  await page.getByRole('heading', { level: 1, name: 'Shared with me' }).waitFor()
  await axe(page, 'shared with me')
  noProblems(page)
})

test('the phone layout at 390×844 has no sideways scrolling', async () => {
  const phone = await signIn(browser, '/drive', { viewport: { width: 390, height: 844 } })
  await phone.getByRole('heading', { level: 1, name: 'My files' }).waitFor()
  await phone.getByRole('link', { name: folder }).click()
  await phone.getByRole('heading', { level: 1, name: folder }).waitFor()
  const width = await phone.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 390, `page is ${width} px wide`)
  await phone.getByRole('button', { name: /^Actions for / }).first().click()
  await phone.getByRole('menuitem', { name: 'Rename' }).waitFor()
  const w2 = await phone.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(w2 <= 390, `page with its menu open is ${w2} px wide`)
  await screenshot(phone, 'drive-phone')
  await axe(phone, 'a folder on a phone')
  noProblems(phone)
})
