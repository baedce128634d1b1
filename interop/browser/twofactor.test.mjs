// Two-factor sign-in: a person sets it up in settings (QR code and secret key),
// confirms with a code computed here from the secret shown (RFC 6238), keeps a
// recovery code, and signs in again with a code, then with the recovery code,
// which works once.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { base, launch, newPage, noProblems, axe, screenshot, signInAs } from './browser.mjs'

const email = process.env.TF_EMAIL
const password = process.env.TF_PASSWORD
let browser
let secret = ''
let recovery = []

before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// totp is the RFC 6238 code (HMAC-SHA-1, 30-second steps, 6 digits) of a
// base32 secret at time ms.
function totp (key, ms = Date.now()) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  let bits = ''
  for (const ch of key.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0')
  const bytes = Buffer.from(bits.match(/.{8}/g).map(b => parseInt(b, 2)))
  const msg = Buffer.alloc(8)
  msg.writeBigUInt64BE(BigInt(Math.floor(ms / 1000 / 30)))
  const h = crypto.createHmac('sha1', bytes).update(msg).digest()
  const off = h[h.length - 1] & 0x0f
  return String((h.readUInt32BE(off) & 0x7fffffff) % 1000000).padStart(6, '0')
}

test('RFC 6238 test vector', () => {
  const key = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' // base32 of "12345678901234567890"
  assert.equal(totp(key, 59000), '287082')
  assert.equal(totp(key, 1111111109000), '081804')
})

// passwordStep signs in with the password and lands on the code step.
async function passwordStep (page) {
  await page.goto(base + '/signin')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(u => u.pathname === '/signin/code')
  await page.getByRole('button', { name: 'Verify' }).waitFor()
}

async function signOut (page) {
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByRole('button', { name: 'Sign in' }).waitFor()
}

test('two-factor sign-in is set up in settings and shows recovery codes once', async () => {
  const page = await newPage(browser)
  await page.goto(base + '/settings')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(base + '/settings')
  const section = page.locator('#two-factor')
  await section.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor()
  assert.match(await section.innerText(), /App passwords and personal access tokens are not affected/)
  await section.getByRole('button', { name: 'Set up two-factor sign-in' }).click()

  const key = page.getByLabel('Secret key')
  await key.waitFor()
  secret = await key.inputValue()
  assert.match(secret, /^[A-Z2-7]{32}$/)
  const qr = section.locator('img.qr')
  assert.match(await qr.getAttribute('src'), /^data:image\/png;base64,/)
  assert.ok(await qr.evaluate(img => img.complete && img.naturalWidth > 100), 'the QR code is drawn')
  assert.ok((await qr.getAttribute('alt')).length > 0)
  await axe(page, 'the two-factor set-up')
  await section.scrollIntoViewIfNeeded()
  await screenshot(page, 'twofactor-setup')

  // A wrong code changes nothing.
  await page.getByLabel('Authentication code', { exact: true }).fill(totp(secret) === '000000' ? '111111' : '000000')
  await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click()
  await page.locator('.flash.err').waitFor()
  assert.match(await page.locator('.flash.err').innerText(), /not the current code/)
  assert.equal(await page.getByLabel('Secret key').inputValue(), secret)

  await page.getByLabel('Authentication code', { exact: true }).fill(totp(secret))
  await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click()
  await page.locator('.recovery-codes').waitFor()
  recovery = await page.locator('.recovery-codes code').allInnerTexts()
  assert.equal(recovery.length, 10)
  for (const c of recovery) assert.match(c, /^[0-9a-f]{5}-[0-9a-f]{5}$/)
  assert.match(await section.innerText(), /Two-factor sign-in is on/)
  assert.match(await section.innerText(), /shown only this once/)
  await axe(page, 'the two-factor section with recovery codes')
  await screenshot(page, 'twofactor-codes')

  // Shown once.
  await page.goto(base + '/settings')
  assert.equal(await page.locator('.recovery-codes').count(), 0)
  assert.match(await page.locator('#two-factor').innerText(), /10 of 10 recovery codes left/)
  await axe(page, 'the two-factor section, on')
  await signOut(page)
  noProblems(page)
})

test('sign-in asks for the code after the password', async () => {
  assert.ok(secret, 'set up first')
  const page = await newPage(browser)
  await passwordStep(page)
  const main = page.locator('main')
  assert.match(await main.innerText(), /recovery codes in the same field/)
  await axe(page, 'the code step')
  await screenshot(page, 'twofactor-code')
  await page.getByLabel('Authentication code').fill('000000')
  await page.getByRole('button', { name: 'Verify' }).click()
  await page.locator('.flash.err').waitFor()
  assert.match(await page.locator('.flash.err').innerText(), /not correct/)
  assert.equal(new URL(page.url()).pathname, '/signin/code')
  await axe(page, 'the code step with an error')
  // The code of the next step: the one of the set-up is spent (a code works once).
  await page.getByLabel('Authentication code').fill(totp(secret, Date.now() + 30000))
  await page.getByRole('button', { name: 'Verify' }).click()
  await page.waitForURL(u => !u.pathname.startsWith('/signin'))
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).waitFor()
  await signOut(page)
  noProblems(page)
})

test('a recovery code signs in once', async () => {
  assert.equal(recovery.length, 10, 'set up first')
  const page = await newPage(browser)
  await passwordStep(page)
  await page.getByLabel('Authentication code').fill(recovery[0])
  await page.getByRole('button', { name: 'Verify' }).click()
  await page.waitForURL(u => !u.pathname.startsWith('/signin'))
  await page.goto(base + '/settings')
  assert.match(await page.locator('#two-factor').innerText(), /9 of 10 recovery codes left/)
  await signOut(page)

  await passwordStep(page)
  await page.getByLabel('Authentication code').fill(recovery[0])
  await page.getByRole('button', { name: 'Verify' }).click()
  await page.locator('.flash.err').waitFor()
  assert.match(await page.locator('.flash.err').innerText(), /not correct/)
  assert.equal(new URL(page.url()).pathname, '/signin/code')
  noProblems(page)
})

test('the code step on a phone', async () => {
  assert.ok(secret, 'set up first')
  const page = await newPage(browser, { viewport: { width: 390, height: 844 } })
  await passwordStep(page)
  const wide = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(wide <= 390, `the page is ${wide}px wide on a 390px screen`)
  await axe(page, 'the code step on a phone')
  await screenshot(page, 'twofactor-code-phone')
  noProblems(page)
})

test('the two-factor section on a phone', async () => {
  const page = await newPage(browser, { viewport: { width: 390, height: 844 } })
  await passwordStep(page)
  await page.getByLabel('Authentication code').fill(recovery[1])
  await page.getByRole('button', { name: 'Verify' }).click()
  await page.waitForURL(u => !u.pathname.startsWith('/signin'))
  await page.goto(base + '/settings#two-factor')
  const wide = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(wide <= 390, `the settings page is ${wide}px wide on a 390px screen`)
  await page.locator('#two-factor').scrollIntoViewIfNeeded()
  await screenshot(page, 'twofactor-settings-phone')
  noProblems(page)
})

// Last: the person lost their phone and their recovery codes. An admin of
// their organisation turns two-factor sign-in off from the users list (a 2FA
// badge marks who has it); the password alone then signs them in.
test('an admin turns two-factor sign-in off for a person who lost their device', async () => {
  assert.ok(secret, 'set up first')
  const page = await signInAs(browser, process.env.ADMIN_EMAIL, process.env.ADMIN_PASSWORD, '/admin')
  await page.getByLabel('Search users').fill(email)
  await page.getByRole('button', { name: 'Search' }).click()
  await page.waitForFunction(() => document.querySelectorAll('#users-body tr').length === 1)
  const row = page.locator('#users-body tr', { has: page.getByText(email, { exact: true }) })
  await row.getByText('2FA', { exact: true }).waitFor()
  await page.getByRole('button', { name: `Actions for ${email}` }).click()
  await page.getByRole('menuitem', { name: 'Turn off two-factor sign-in' }).click()
  const dlg = page.getByRole('dialog', { name: `Turn off two-factor sign-in for ${email}?` })
  await dlg.waitFor()
  assert.match(await dlg.innerText(), /password alone/)
  await axe(page, 'the turn-off confirmation')
  await dlg.getByRole('button', { name: 'Turn off' }).click()
  await dlg.waitFor({ state: 'hidden' })
  await page.getByRole('status').getByText(`Two-factor sign-in is off for ${email}.`).waitFor()
  assert.equal(await row.getByText('2FA', { exact: true }).count(), 0)
  // The menu no longer offers it.
  await page.getByRole('button', { name: `Actions for ${email}` }).click()
  assert.equal(await page.getByRole('menuitem', { name: 'Turn off two-factor sign-in' }).count(), 0)
  await page.keyboard.press('Escape')
  noProblems(page)

  const person = await signInAs(browser, email, password, '/settings')
  assert.equal(new URL(person.url()).pathname, '/settings')
  await person.getByRole('button', { name: 'Set up two-factor sign-in' }).waitFor()
  noProblems(person)
})
