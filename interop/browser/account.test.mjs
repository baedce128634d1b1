// A person invited to Atrium sets a password on the invitation page, signs in,
// creates an app password and mounts the drive with it, connects a Nextcloud
// client from the Settings instructions (Login Flow v2), manages sessions and
// signs out — in a browser, with nothing else installed.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { base, launch, newPage, noProblems, axe } from './browser.mjs'

const invite = process.env.INVITE_URL
const email = process.env.USER_EMAIL
const password = 'a long browser password 1'
let browser

before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

async function signIn (page, pw = password) {
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(pw)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

test('the invitation page sets the password and links to sign-in', async () => {
  const page = await newPage(browser)
  await page.goto(invite)
  await axe(page, 'the invitation page')
  await page.getByLabel('New password').fill(password)
  await page.getByLabel('Repeat the password').fill(password)
  await page.getByRole('button').click()
  const link = page.locator('a[href="/"]')
  await link.waitFor()
  await link.click()
  await page.getByRole('button', { name: 'Sign in' }).waitFor()
  noProblems(page)
})

test('a deep link leads through sign-in and back; a wrong password is refused', async () => {
  const page = await newPage(browser)
  page.on('dialog', d => { page.problems.push(`dialog: ${d.message()}`); d.dismiss() })
  await page.goto(base + '/settings')
  await page.getByRole('button', { name: 'Sign in' }).waitFor()
  await axe(page, 'the sign-in page')
  await signIn(page, 'not the password')
  await page.getByRole('button', { name: 'Sign in' }).waitFor()
  assert.match(await page.locator('main').innerText(), /not correct|wrong|incorrect|invalid/i)
  await signIn(page)
  await page.waitForURL(base + '/settings')
  const nav = page.getByRole('navigation')
  await nav.getByRole('link', { name: 'Settings' }).waitFor()
  await axe(page, 'the settings page')
  noProblems(page)
})

test('an app password made in settings mounts the drive over WebDAV', async () => {
  const page = await newPage(browser)
  await page.goto(base + '/settings')
  await signIn(page)
  await page.waitForURL(base + '/settings')
  await page.getByRole('button', { name: 'Create app password' }).click()
  const field = page.getByLabel('New app password')
  await field.waitFor()
  assert.equal(await field.getAttribute('readonly') !== null, true, 'the new app password is read-only')
  const secret = await field.inputValue()
  assert.ok(secret.length >= 20, `app password ${secret}`)
  const html = await page.content()
  assert.ok(html.includes(base + '/webdav/') && html.includes(base + '/dav/'), 'the WebDAV and DAV addresses are beside the new app password')
  if (process.env.SCREENSHOTS) await page.screenshot({ path: `${process.env.SCREENSHOTS}/settings.png`, fullPage: true })
  await axe(page, 'the settings page with a new app password')
  const res = await fetch(base + '/webdav/', {
    method: 'PROPFIND',
    headers: { Depth: '1', Authorization: 'Basic ' + Buffer.from(`${email}:${secret}`).toString('base64') }
  })
  assert.equal(res.status, 207)
  // Shown once: on the settings page again the secret is gone.
  await page.goto(base + '/settings')
  assert.equal(await page.getByLabel('New app password').count(), 0)
  assert.ok(!(await page.content()).includes(secret), 'the app password is shown again')
  noProblems(page)
})

test('sessions are listed and revocable; sign out ends the session', async () => {
  const a = await newPage(browser)
  const b = await newPage(browser)
  for (const p of [a, b]) {
    await p.goto(base + '/settings')
    await signIn(p)
    await p.waitForURL(base + '/settings')
  }
  // b revokes every other session (a's among them) one by one.
  await b.reload()
  const revoke = b.getByRole('button', { name: /^Revoke session from/ })
  const n = await revoke.count()
  assert.ok(n >= 1, 'other sessions are listed with a revoke button')
  for (let i = 0; i < n; i++) {
    await b.getByRole('button', { name: /^Revoke session from/ }).first().click()
    await b.waitForLoadState()
  }
  await a.goto(base + '/settings')
  await a.getByRole('button', { name: 'Sign in' }).waitFor()
  await b.getByRole('button', { name: 'Sign out' }).click()
  await b.getByRole('button', { name: 'Sign in' }).waitFor()
  await b.goto(base + '/settings')
  await b.getByRole('button', { name: 'Sign in' }).waitFor()
  noProblems(a)
  noProblems(b)
})

test('the phone layout at 390×844 has no sideways scrolling', async () => {
  const page = await newPage(browser, { viewport: { width: 390, height: 844 } })
  await page.goto(base + '/settings')
  await signIn(page)
  await page.waitForURL(base + '/settings')
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 390, `page is ${width} px wide`)
  await axe(page, 'the settings page on a phone')
  noProblems(page)
})

test('a Nextcloud client connects from the Settings instructions: the person approves it in the browser, the client gets an app password named after it', async () => {
  const page = await newPage(browser)
  await page.goto(base + '/settings')
  await signIn(page)
  await page.waitForURL(base + '/settings')
  await page.getByRole('heading', { name: 'Desktop and mobile clients' }).waitFor()
  const server = await page.getByLabel('Server address').inputValue()
  assert.equal(server, base)
  // What the Nextcloud desktop client does with that address (Login Flow v2):
  // start a sign-in, open the browser at its page, poll.
  const start = await (await fetch(server + '/index.php/login/v2', {
    method: 'POST', headers: { 'User-Agent': 'Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian)' }
  })).json()
  const poll = () => fetch(start.poll.endpoint, { method: 'POST', body: new URLSearchParams({ token: start.poll.token }) })
  assert.equal((await poll()).status, 404)
  await page.goto(start.login)
  await page.getByRole('heading', { name: 'Connect Nextcloud desktop (Linux)?' }).waitFor()
  await axe(page, 'the connect page')
  await page.getByRole('button', { name: 'Connect', exact: true }).click()
  await page.getByRole('heading', { name: 'Nextcloud desktop (Linux) is connected' }).waitFor()
  const res = await poll()
  assert.equal(res.status, 200)
  const got = await res.json()
  assert.equal(got.loginName, email)
  assert.equal(got.server, base)
  const user = await fetch(server + '/ocs/v1.php/cloud/user?format=json', {
    headers: { Authorization: 'Basic ' + Buffer.from(got.loginName + ':' + got.appPassword).toString('base64') }
  })
  assert.equal(user.status, 200)
  assert.equal((await poll()).status, 404, 'the app password is handed out once')
  // Listed, and revocable, with the other app passwords.
  await page.goto(base + '/settings')
  await page.getByRole('button', { name: 'Revoke app password Nextcloud desktop (Linux)' }).waitFor()
  noProblems(page)
})
