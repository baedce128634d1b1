// The reseller console: the operator made by `atrium bootstrap` sets a password
// through the printed link and signs in, provisions a customer organisation in
// the browser, whose admin accepts the invitation; suspending the organisation
// keeps that admin out, activating it lets them back in; a seat count below
// the floor is explained before anything is sent; a team gains a member and
// loses them.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { base, launch, newPage, noProblems, axe, signInAs, mailLink, screenshot } from './browser.mjs'

const staffEmail = process.env.PARTNER_STAFF_EMAIL
const passwordURL = process.env.PARTNER_PASSWORD_URL
const staffPassword = 'reseller staff password 1'
const stamp = Date.now().toString(36)
const orgName = `Browser Reseller Customer ${stamp}`
const slug = `brc-${stamp}`
const adminEmail = `admin-${stamp}@customer.test`
const adminPassword = 'customer admin password 1'
let browser
let orgPath = ''

before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// setPassword fills the invitation or password page at link.
async function setPassword (link, password) {
  const page = await newPage(browser)
  await page.goto(link)
  await axe(page, 'the password page')
  await page.getByLabel('New password').fill(password)
  await page.getByLabel('Repeat the password').fill(password)
  await page.getByRole('button').click()
  await page.locator('a[href="/"]').waitFor()
  noProblems(page)
  await page.context().close()
}

// trySignIn signs in on a fresh page and returns it (wherever it landed).
async function trySignIn (email, password) {
  const page = await newPage(browser)
  await page.goto(base + '/signin')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForLoadState()
  return page
}

function staffPage (path, opts) { return signInAs(browser, staffEmail, staffPassword, path, opts) }

// confirm clicks button, checks the confirmation dialog says what, and confirms.
async function confirm (page, button, says, confirmName) {
  await page.getByRole('button', { name: button, exact: true }).click()
  const dlg = page.getByRole('dialog')
  await dlg.waitFor()
  assert.match(await dlg.innerText(), says)
  await axe(page, `the ${button} confirmation`)
  await Promise.all([page.waitForEvent('load'), dlg.getByRole('button', { name: confirmName, exact: true }).click()])
}

test('the password link of atrium bootstrap lets the operator sign in', async () => {
  assert.ok(passwordURL && passwordURL.startsWith(base + '/reset/'), `password_url ${passwordURL}`)
  await setPassword(passwordURL, staffPassword)
  const page = await staffPage('/partner')
  assert.equal(new URL(page.url()).pathname, '/partner')
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).waitFor()
  await page.getByRole('heading', { name: 'Customers', level: 1 }).waitFor()
  await axe(page, 'the customers page')
  noProblems(page)
})

test('a customer organisation is created through the dialog', async () => {
  const page = await staffPage('/partner')
  await page.getByRole('button', { name: 'New organisation' }).click()
  const dlg = page.getByRole('dialog', { name: 'New organisation' })
  await dlg.waitFor()
  await axe(page, 'the new organisation dialog')
  await screenshot(page, 'partner-new-org')
  await dlg.getByLabel('Name', { exact: true }).fill(orgName)
  await dlg.getByLabel('Slug').fill(slug)
  await dlg.getByLabel('Billing email').fill(`billing-${stamp}@customer.test`)
  await dlg.getByLabel('Plan').selectOption('business')
  await dlg.getByLabel('Seats', { exact: true }).fill('5')
  await dlg.getByLabel('Admin email').fill(adminEmail)
  await dlg.getByRole('button', { name: 'Create' }).click()
  await page.waitForURL(u => /^\/partner\/[0-9a-f-]+$/.test(u.pathname))
  orgPath = new URL(page.url()).pathname
  await page.getByRole('heading', { name: orgName, level: 1 }).waitFor()
  assert.match(await page.getByRole('status').first().innerText(), /is created/)
  assert.ok((await page.locator('#users').innerText()).includes(adminEmail), 'the admin is listed')
  await axe(page, 'the organisation page')
  await screenshot(page, 'partner-org')
  // The list finds it by name.
  await page.goto(base + '/partner')
  await page.getByLabel('Search organisations').fill(stamp)
  await page.getByRole('button', { name: 'Search' }).click()
  await page.getByRole('link', { name: orgName }).waitFor()
  await screenshot(page, 'partner-list')
  noProblems(page)
})

test("the customer's admin accepts the invitation and signs in", async () => {
  assert.ok(orgPath, 'the organisation was created')
  const link = mailLink(adminEmail, '/invite/')
  assert.ok(link, `an invitation mailed to ${adminEmail}`)
  await setPassword(link, adminPassword)
  const page = await signInAs(browser, adminEmail, adminPassword, '/settings')
  assert.equal(new URL(page.url()).pathname, '/settings')
  assert.equal(await page.getByRole('link', { name: 'Customers' }).count(), 0, 'a customer sees no Customers')
  noProblems(page)
})

test('suspending the organisation keeps its admin out; activating lets them in', async () => {
  const page = await staffPage(orgPath)
  await confirm(page, 'Suspend organisation', /cannot sign in or use any app/, 'Suspend')
  await page.getByRole('button', { name: 'Activate organisation' }).waitFor()
  assert.match(await page.locator('h1').innerText(), /Suspended/)

  const refused = await trySignIn(adminEmail, adminPassword)
  assert.equal(new URL(refused.url()).pathname, '/signin')
  assert.match(await refused.locator('main').innerText(), /organisation is suspended/i)
  noProblems(refused)

  await confirm(page, 'Activate organisation', /sign in again/, 'Activate')
  await page.getByRole('button', { name: 'Suspend organisation' }).waitFor()
  const back = await trySignIn(adminEmail, adminPassword)
  assert.notEqual(new URL(back.url()).pathname, '/signin')
  noProblems(back)
  noProblems(page)
})

test('seats below the floor are explained before the request is sent', async () => {
  const page = await staffPage(orgPath)
  // One more person: an invitation takes a seat.
  const users = page.locator('#users')
  await users.getByLabel('Email').fill(`colleague-${stamp}@customer.test`)
  await Promise.all([page.waitForEvent('load'), users.getByRole('button', { name: 'Invite' }).click()])
  await page.getByRole('status').filter({ hasText: 'invitation is sent' }).waitFor()
  const hint = await page.locator('#sub-seats-hint').innerText()
  assert.match(hint, /1 active user and 1 pending invitation: seats can't go below 2/)

  const sent = []
  page.on('request', r => { if (r.url().includes('/change-seats')) sent.push(r.url()) })
  await page.getByLabel('Seats', { exact: true }).fill('1')
  await page.getByRole('button', { name: 'Change seats' }).click()
  const alert = page.locator('#seats-form [role="alert"]')
  await alert.waitFor()
  assert.match(await alert.innerText(), /seats can't go below 2/)
  assert.deepEqual(sent, [], 'no request below the floor')
  await axe(page, 'the organisation page with the seat explanation')

  await page.getByLabel('Seats', { exact: true }).fill('8')
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Change seats' }).click()])
  await page.getByRole('status').filter({ hasText: 'seats are changed' }).waitFor()
  assert.equal(await page.getByLabel('Seats', { exact: true }).inputValue(), '8')
  assert.match(await page.locator('#subscription').innerText(), /2 of 8 in use/)
  noProblems(page)
})

test('a team is made; a user is added to it and removed again', async () => {
  const page = await staffPage(orgPath)
  const teams = page.locator('#teams')
  await teams.getByLabel('Team name').fill('Support')
  await Promise.all([page.waitForEvent('load'), teams.getByRole('button', { name: 'Create team' }).click()])
  await page.getByRole('status').filter({ hasText: 'team is created' }).waitFor()
  const summary = () => teams.locator('summary').filter({ hasText: 'of Support' })
  assert.match(await summary().innerText(), /^0 members/)
  // The admin never gave a name: the e-mail address names them.
  await teams.getByLabel('User', { exact: true }).selectOption({ label: adminEmail })
  await teams.getByLabel('Team', { exact: true }).selectOption({ label: 'Support' })
  await Promise.all([page.waitForEvent('load'), teams.getByRole('button', { name: 'Add to team' }).click()])
  await page.getByRole('status').filter({ hasText: `${adminEmail} is added to the team Support.` }).waitFor()
  assert.match(await summary().innerText(), /^1 member/)
  // Once more: the server's refusal is shown in the form.
  await teams.getByLabel('User', { exact: true }).selectOption({ label: adminEmail })
  await teams.getByLabel('Team', { exact: true }).selectOption({ label: 'Support' })
  await teams.getByRole('button', { name: 'Add to team' }).click()
  const refused = page.locator('#member-form [role="alert"]')
  await refused.waitFor()
  assert.match(await refused.innerText(), /already a member/)

  await summary().click()
  assert.ok((await teams.getByRole('list', { name: 'Members of Support' }).innerText()).includes(adminEmail), 'the admin is listed as a member')
  await axe(page, 'a team with its members shown')
  await screenshot(page, 'partner-team-members')
  await confirm(page, `Remove ${adminEmail} from the team Support`, /stays in the organisation/, 'Remove')
  await page.getByRole('status').filter({ hasText: 'no longer in the team Support' }).waitFor()
  assert.match(await summary().innerText(), /^0 members/)
  // The refused request is the browser's console error; nothing else is.
  page.problems = page.problems.filter(p => !/status of 409/.test(p))
  noProblems(page)
})

test('the phone layout at 390×844 has no sideways scrolling', async () => {
  for (const path of ['/partner', orgPath]) {
    const page = await staffPage(path, { viewport: { width: 390, height: 844 } })
    // Every team's members shown: they fit too. No table scrolls sideways in
    // its frame either (the frame is there for what no layout can fit).
    for (const s of await page.locator('#teams summary').all()) await s.click()
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(width <= 390, `${path} is ${width} px wide`)
    const wide = await page.evaluate(() => [...document.querySelectorAll('.table-wrap')]
      .filter(w => w.scrollWidth - w.clientWidth > 1).map(w => `${w.querySelector('table').className}: ${w.scrollWidth - w.clientWidth} px`))
    assert.deepEqual(wide, [], `${path}: tables wider than their frame`)
    await axe(page, `${path} on a phone`)
    await screenshot(page, path === '/partner' ? 'partner-list-phone' : 'partner-org-phone')
    noProblems(page)
  }
})
