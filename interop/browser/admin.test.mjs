// The organisation admin's pages: users (invite through the dialog, the person
// accepts and signs in, suspend refuses their sign-in, activate lets them back),
// teams, plan and usage, the audit log — each checked with axe, and the users
// page on a phone.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { base, launch, newPage, noProblems, axe, signInAs, mailLink, screenshot } from './browser.mjs'

const email = process.env.ADMIN_EMAIL
const password = process.env.ADMIN_PASSWORD
const stamp = Date.now().toString(36)
const invitee = `invitee.${stamp}@browser.test`
const inviteePassword = 'invitee password 12'
let browser

before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

function admin (path) { return signInAs(browser, email, password, path) }

function row (page, addr) { return page.locator('#users-body tr', { has: page.getByText(addr, { exact: true }) }) }

async function userAction (page, addr, item) {
  await page.getByRole('button', { name: `Actions for ${addr}` }).click()
  await page.getByRole('menuitem', { name: item }).click()
}

// signInFails tries to sign in as the invitee and returns the page's message.
async function signInMessage () {
  const page = await newPage(browser)
  await page.goto(base + '/signin')
  await page.getByLabel('Email').fill(invitee)
  await page.getByLabel('Password', { exact: true }).fill(inviteePassword)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForLoadState('load')
  const url = new URL(page.url())
  const text = await page.locator('main').innerText()
  await page.context().close()
  return { path: url.pathname, text }
}

test('the admin lists the users, invites one, and the person signs in', async () => {
  const page = await admin('/admin')
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).waitFor()
  await row(page, email).waitFor()
  assert.match(await row(page, email).innerText(), /admin/i)
  await axe(page, 'the users page')
  await screenshot(page, 'admin-users')

  await page.getByRole('button', { name: 'Invite user' }).click()
  const dlg = page.getByRole('dialog', { name: 'Invite people' })
  await dlg.waitFor()
  await dlg.getByLabel('Email').fill(invitee)
  await dlg.getByLabel('First name').fill('Ivy')
  await dlg.getByLabel('Last name').fill('Invitee')
  await dlg.getByLabel('Role').selectOption({ label: 'Member' })
  await axe(page, 'the invitation dialog')
  await screenshot(page, 'admin-invite')
  await dlg.getByRole('button', { name: 'Invite', exact: true }).click()
  await dlg.waitFor({ state: 'hidden' })
  await row(page, invitee).waitFor()
  assert.match(await row(page, invitee).innerText(), /invited/)

  // Search finds them; the status filter keeps them among the invited.
  await page.getByLabel('Search users').fill(`invitee.${stamp}`)
  await page.getByRole('button', { name: 'Search' }).click()
  await page.waitForFunction(() => document.querySelectorAll('#users-body tr').length === 1)
  await page.getByLabel('Status').selectOption('invited')
  await row(page, invitee).waitFor()
  noProblems(page)

  const link = mailLink(invitee, '/invite/')
  assert.ok(link, 'the invitation mail has a link')
  const p2 = await newPage(browser)
  await p2.goto(link)
  await p2.getByLabel('New password').fill(inviteePassword)
  await p2.getByLabel('Repeat the password').fill(inviteePassword)
  await p2.getByRole('button').click()
  await p2.locator('a[href="/"]').waitFor()
  noProblems(p2)
  await p2.context().close()
  const p3 = await signInAs(browser, invitee, inviteePassword, '/')
  assert.equal(new URL(p3.url()).pathname, '/drive')
  noProblems(p3)
  await p3.context().close()
})

test('suspend refuses the person\'s sign-in; activate lets them in again', async () => {
  const page = await admin('/admin')
  await page.getByLabel('Search users').fill(invitee)
  await page.getByRole('button', { name: 'Search' }).click()
  await page.waitForFunction(() => document.querySelectorAll('#users-body tr').length === 1)
  await row(page, invitee).waitFor()
  assert.match(await row(page, invitee).innerText(), /active/)
  await userAction(page, invitee, 'Suspend')
  const dlg = page.getByRole('dialog', { name: `Suspend ${invitee}?` })
  await dlg.waitFor()
  assert.match(await dlg.innerText(), /sessions end/)
  await axe(page, 'the suspend confirmation')
  await dlg.getByRole('button', { name: 'Suspend user' }).click()
  await dlg.waitFor({ state: 'hidden' })
  await page.getByRole('status').getByText(`${invitee} is suspended.`).waitFor()
  assert.match(await row(page, invitee).innerText(), /suspended/)

  const refused = await signInMessage()
  assert.equal(refused.path, '/signin')
  assert.match(refused.text, /suspended/i)

  await userAction(page, invitee, 'Activate')
  await page.getByRole('status').getByText(`${invitee} is active again.`).waitFor()
  assert.match(await row(page, invitee).innerText(), /active/)
  const again = await signInMessage()
  assert.equal(again.path, '/drive')

  // The delete confirmation says what goes; cancelled, nothing happens.
  await userAction(page, invitee, 'Delete')
  const del = page.getByRole('dialog', { name: `Delete ${invitee}?` })
  await del.waitFor()
  assert.match(await del.innerText(), /files.*contacts and calendars.*app passwords.*sessions/s)
  await del.getByRole('button', { name: 'Cancel' }).click()
  await del.waitFor({ state: 'hidden' })
  noProblems(page)
})

test('teams: create a team and add a member', async () => {
  const page = await admin('/admin/teams')
  const name = `Team ${stamp}`
  await page.getByLabel('Team name').fill(name)
  await page.getByRole('button', { name: 'Create team' }).click()
  const members = page.getByRole('region', { name: `Members of ${name}` })
  await members.waitFor()
  await members.getByLabel('User to add').selectOption({ label: `${invitee} (Ivy Invitee)` })
  await members.getByRole('button', { name: 'Add member' }).click()
  await members.getByText(invitee, { exact: true }).waitFor()
  const teamRow = page.locator('#teams-body tr', { has: page.getByText(name, { exact: true }) })
  await page.waitForFunction(() => [...document.querySelectorAll('#teams-body tr')].some(tr => tr.children[1]?.textContent === '1'))
  assert.match(await teamRow.innerText(), /1/)
  await axe(page, 'the teams page')
  await screenshot(page, 'admin-teams')
  noProblems(page)
})

// upload stores a file in the signed-in person's drive through the REST API
// (ticket, PUT, confirm) with the session cookie and the page's token.
async function upload (page, name, type, size) {
  await page.evaluate(async ({ name, type, size }) => {
    const csrf = document.querySelector('meta[name="csrf-token"]').content
    const h = { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }
    const tk = await (await fetch('/api/v1/drive/upload', { method: 'POST', headers: h, body: JSON.stringify({ name, mime_type: type, size }) })).json()
    await fetch(tk.upload_url, { method: 'PUT', headers: { 'Content-Type': type }, body: new Uint8Array(size).fill(65) })
    await fetch(`/api/v1/drive/${tk.file.id}/confirm`, { method: 'POST', headers: { 'X-CSRF-Token': csrf } })
  }, { name, type, size })
}

test('plan and usage, and the audit log with the invitation', async () => {
  const page = await admin('/admin/usage')
  await upload(page, `usage-${stamp}.txt`, 'text/plain', 30000)
  await upload(page, `usage-${stamp}.png`, 'image/png', 12000)
  await page.reload()
  await page.getByRole('heading', { name: 'Storage by user' }).waitFor()
  const main = await page.locator('main').innerText()
  assert.match(main, /Seats\s+\d+ of \d+ used/)
  assert.match(main, new RegExp(email.replace(/[.]/g, '\\.') + '[\\s\\S]*Ora Admin'))
  assert.match(main, /Text[\s\S]*Images/)
  await axe(page, 'the plan and usage page')
  await screenshot(page, 'admin-usage')
  noProblems(page)

  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Audit log' }).click()
  await page.waitForURL(base + '/admin/audit')
  await page.locator('#audit-body tr').first().waitFor()
  await page.getByLabel('Module').selectOption('admin')
  await page.getByLabel('Actor').selectOption({ label: email })
  await page.getByRole('button', { name: 'Apply' }).click()
  await page.waitForFunction(() => [...document.querySelectorAll('#audit-body tr')].some(tr => tr.textContent.includes('user.invited') || tr.textContent.includes('user.created')))
  const text = await page.locator('#audit-body').innerText()
  assert.match(text, new RegExp(invitee.replace(/[.]/g, '\\.')))
  await axe(page, 'the audit log')
  await screenshot(page, 'admin-audit')
  noProblems(page)
})

test('the users page on a phone', async () => {
  const page = await signInAs(browser, email, password, '/admin', { viewport: { width: 390, height: 844 } })
  await row(page, email).waitFor()
  const wide = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(wide <= 390, `the page is ${wide}px wide on a 390px phone`)
  await axe(page, 'the users page on a phone')
  await screenshot(page, 'admin-users-phone')
  await userAction(page, invitee, 'Suspend')
  const dlg = page.getByRole('dialog', { name: `Suspend ${invitee}?` })
  await dlg.waitFor()
  await screenshot(page, 'admin-confirm-phone')
  await dlg.getByRole('button', { name: 'Cancel' }).click()
  noProblems(page)
})
