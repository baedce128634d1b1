// The drive's last pieces in a browser: the Favourites view (a file marked in
// its folder shows there, a folder there opens the folder, removing the mark
// removes the row), on a desktop and on a phone.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { base, launch, noProblems, axe, signIn, screenshot } from './browser.mjs'

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
  await page.locator('#upload-files').setInputFiles({ name: favFile, mimeType: 'text/plain', buffer: Buffer.from('a favourite') })
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
