// The admin console's webhooks and service principals pages: an admin of the
// customer organisation (fixtures/webhooks.sh) creates a webhook to a receiver
// in this process, sees a failed delivery, replays it and checks its signature;
// pauses, resumes, rotates and deletes it; makes a service principal and a
// token, uses the token and revokes it.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import crypto from 'node:crypto'
import { launch, noProblems, axe, signInAs, screenshot, base } from './browser.mjs'

const email = process.env.HOOKS_ADMIN_EMAIL
const password = process.env.HOOKS_ADMIN_PASSWORD
const tag = Date.now().toString(36)
const phone = { viewport: { width: 390, height: 844 } }

let browser
let receiver
const got = [] // requests the receiver got: {headers, body}
before(async () => {
  browser = await launch()
  // The receiver answers 500 to the first delivery and 200 afterwards.
  receiver = http.createServer((req, res) => {
    const chunks = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      res.writeHead(got.length === 1 ? 500 : 200, { 'Content-Type': 'text/plain' })
      res.end(got.length === 1 ? `not yet <b>${tag}</b>` : 'ok')
    })
  })
  await new Promise(resolve => receiver.listen(0, '127.0.0.1', resolve))
})
after(async () => {
  await browser?.close()
  await new Promise(resolve => receiver ? receiver.close(resolve) : resolve())
})

function watchDialogs (page) {
  page.on('dialog', d => { page.problems.push(`dialog: ${d.message()}`); d.dismiss() })
}

// verify checks a delivery's signature as docs/webhooks.md says: sha256= and
// the hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret.
function verify (secret, r) {
  const want = 'sha256=' + crypto.createHmac('sha256', secret).update(`${r.headers['x-service-timestamp']}.${r.body}`).digest('hex')
  const have = r.headers['x-service-signature-256'] || ''
  return have.length === want.length && crypto.timingSafeEqual(Buffer.from(have), Buffer.from(want))
}

// noSideways asserts the page does not scroll sideways.
async function noSideways (page, what) {
  const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth])
  assert.ok(sw <= cw, `${what} scrolls sideways on a phone (${sw} > ${cw})`)
}

// secretShown waits for the dialog titled title that shows a secret once and
// returns it with the value of its field labelled label.
async function secretShown (page, title, label) {
  // Exact names: the service principal's token form is "New token for …",
  // with a "Token name" field, and may still be open when this looks.
  const d = page.getByRole('dialog', { name: title, exact: true })
  await d.waitFor()
  const value = await d.getByLabel(label, { exact: true }).inputValue()
  return { d, value }
}

// api calls the REST API from the page, with its session and anti-forgery token.
async function api (page, method, path, body) {
  return page.evaluate(async ([method, path, body]) => {
    const csrf = document.querySelector('meta[name="csrf-token"]').content
    const res = await fetch(path, {
      method, credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    return { status: res.status, body: await res.json().catch(() => null) }
  }, [method, path, body])
}

test('a webhook is created, its failed delivery replayed, paused, resumed, rotated and deleted', async () => {
  assert.ok(email && password, 'HOOKS_ADMIN_EMAIL and HOOKS_ADMIN_PASSWORD are set by fixtures/webhooks.sh')
  const url = `http://127.0.0.1:${receiver.address().port}/hook-${tag}`
  const page = await signInAs(browser, email, password, '/admin/webhooks')
  watchDialogs(page)
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
  assert.equal(await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current'), 'page')
  await axe(page, 'the webhooks page')
  await screenshot(page, 'webhooks-empty')

  // Create: the secret is shown once.
  await page.getByRole('button', { name: 'New webhook' }).click()
  const dialog = page.getByRole('dialog', { name: 'New webhook' })
  await dialog.waitFor()
  assert.equal(await page.evaluate(() => document.activeElement.id), 'hook-url', 'the form opens on the URL')
  await axe(page, 'the new webhook form')
  await screenshot(page, 'webhooks-form')
  await dialog.getByLabel('URL').fill(url)
  await dialog.getByLabel('Description (optional)').fill(`Calendar feed ${tag}`)
  await dialog.getByLabel('calendar.event.created').check()
  await dialog.getByRole('button', { name: 'Create webhook' }).click()
  const { d: shown, value: secret } = await secretShown(page, 'Webhook created', 'Signing secret')
  assert.match(secret, /^[0-9a-f]{64}$/)
  assert.match(await shown.innerText(), /shown only this once/)
  await axe(page, 'the new secret')
  await screenshot(page, 'webhooks-secret')
  await shown.getByRole('button', { name: 'Done' }).click()
  const hook = page.locator('li.hook', { has: page.getByRole('heading', { name: url }) })
  await hook.waitFor()
  assert.doesNotMatch(await page.content(), new RegExp(secret), 'the secret is not shown again')
  assert.match(await hook.innerText(), /calendar\.event\.created/)
  assert.match(await hook.innerText(), /Active/)

  // An event the webhook receives: a calendar event the admin creates.
  let cals = await api(page, 'GET', '/api/v1/calendar/calendars')
  let list = Array.isArray(cals.body) ? cals.body : (cals.body?.items || [])
  if (list.length === 0) {
    cals = await api(page, 'POST', '/api/v1/calendar/calendars', { name: `Hooks ${tag}` })
    assert.equal(cals.status, 201, JSON.stringify(cals.body))
    list = [cals.body]
  }
  const ev = await api(page, 'POST', `/api/v1/calendar/calendars/${list[0].id}/events`,
    { title: `Hook check ${tag}`, start: '2026-12-01T10:00:00Z', end: '2026-12-01T11:00:00Z' })
  assert.equal(ev.status, 201, JSON.stringify(ev.body))

  // The failed delivery appears on the deliveries page.
  await hook.getByRole('link', { name: `Deliveries of ${url}` }).click()
  await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor()
  const delivery = page.locator('li.delivery').first()
  for (let i = 0; i < 60 && !(await delivery.locator('.badge.st-failed').count()); i++) {
    await page.waitForTimeout(500)
    await page.reload()
  }
  await delivery.locator('summary').click()
  assert.match(await delivery.innerText(), /calendar\.event\.created/)
  assert.match(await delivery.innerText(), /HTTP 500/)
  assert.match(await delivery.innerText(), /X-Service-Signature-256/i)
  assert.match(await delivery.innerText(), new RegExp(`not yet <b>${tag}</b>`), 'the receiver\'s answer shows as text')
  assert.equal(got.length, 1)
  assert.ok(verify(secret, got[0]), 'the first delivery is signed with the secret')
  await axe(page, 'the deliveries page')
  await screenshot(page, 'webhooks-deliveries-failed')

  // Replay: the receiver now answers 200.
  await delivery.getByRole('button', { name: 'Replay' }).click()
  await page.locator('li.delivery .badge.st-successful').first().waitFor({ timeout: 30000 })
  const replayed = page.locator('li.delivery').first()
  assert.match(await replayed.innerText(), /HTTP 200/)
  assert.equal(await replayed.locator('details').getAttribute('open'), '', 'the replayed delivery is open after the reload')
  assert.equal(got.length, 2)
  assert.ok(verify(secret, got[1]), 'the replayed delivery carries a valid signature')
  assert.equal(JSON.parse(got[1].body).id, JSON.parse(got[0].body).id, 'a replay sends the same event')
  assert.equal(await page.getByRole('img', { name: /Delivery attempts per day/ }).count(), 1, 'the chart has a text alternative')
  await axe(page, 'the replayed delivery')
  await screenshot(page, 'webhooks-deliveries')

  // The deliveries page on a phone.
  const small = await signInAs(browser, email, password, page.url().replace(base, '').replace(/#.*/, ''), phone)
  await small.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor()
  await small.locator('li.delivery summary').first().click()
  await noSideways(small, 'the deliveries page')
  await axe(small, 'the deliveries page on a phone')
  await screenshot(small, 'webhooks-deliveries-phone')
  noProblems(small)
  await small.context().close()

  // Pause and resume.
  await page.getByRole('link', { name: '← Webhooks' }).click()
  await hook.getByRole('button', { name: `Pause ${url}` }).click()
  await hook.getByRole('button', { name: `Resume ${url}` }).waitFor()
  assert.match(await hook.innerText(), /Paused/)
  await hook.getByRole('button', { name: `Resume ${url}` }).click()
  await hook.getByRole('button', { name: `Pause ${url}` }).waitFor()
  assert.match(await hook.innerText(), /Active/)

  // Rotate: confirmed, and the new secret is shown once.
  await hook.getByRole('button', { name: `Rotate secret of ${url}` }).click()
  const confirm = page.getByRole('dialog', { name: 'Rotate the signing secret?' })
  await confirm.waitFor()
  await axe(page, 'the rotate confirmation')
  await confirm.getByRole('button', { name: 'Cancel' }).click()
  await confirm.waitFor({ state: 'hidden' })
  await hook.getByRole('button', { name: `Rotate secret of ${url}` }).click()
  await confirm.getByRole('button', { name: 'Rotate secret', exact: true }).click()
  const { d: rotated, value: secret2 } = await secretShown(page, 'New signing secret', 'Signing secret')
  assert.match(secret2, /^[0-9a-f]{64}$/)
  assert.notEqual(secret2, secret)
  await screenshot(page, 'webhooks-rotated')
  await rotated.getByRole('button', { name: 'Done' }).click()
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()

  // The list on a phone.
  const small2 = await signInAs(browser, email, password, '/admin/webhooks', phone)
  await small2.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
  await noSideways(small2, 'the webhooks page')
  await axe(small2, 'the webhooks page on a phone')
  await screenshot(small2, 'webhooks-phone')
  noProblems(small2)
  await small2.context().close()

  // Delete, confirmed.
  await hook.getByRole('button', { name: `Delete ${url}` }).click()
  const del = page.getByRole('dialog', { name: 'Delete this webhook?' })
  await del.waitFor()
  assert.match(await del.innerText(), /delivery history/)
  await del.getByRole('button', { name: 'Delete webhook' }).click()
  await hook.waitFor({ state: 'detached' })
  noProblems(page)
})

test('a service principal gets a token, which works until it is revoked', async () => {
  const name = `robot-${tag}`
  const page = await signInAs(browser, email, password, '/admin/principals')
  watchDialogs(page)
  await page.getByRole('heading', { name: 'Service principals', level: 1 }).waitFor()
  await axe(page, 'the service principals page')

  await page.getByRole('button', { name: 'New service principal' }).click()
  const dialog = page.getByRole('dialog', { name: 'New service principal' })
  await dialog.waitFor()
  await dialog.getByLabel('Name').fill(name)
  await dialog.getByRole('button', { name: 'Create service principal' }).click()
  await dialog.getByRole('alert').filter({ hasText: 'at least one scope' }).waitFor()
  await dialog.getByLabel('contacts:read', { exact: true }).check()
  await axe(page, 'the new service principal form')
  await screenshot(page, 'principals-form')
  await dialog.getByRole('button', { name: 'Create service principal' }).click()
  const sp = page.locator('li.principal', { has: page.getByRole('heading', { name, exact: true }) })
  await sp.waitFor()
  assert.match(await sp.innerText(), /contacts:read/)

  // A token, shown once, that works.
  await sp.getByRole('button', { name: `Create token for ${name}` }).click()
  const td = page.getByRole('dialog', { name: `New token for ${name}` })
  await td.waitFor()
  await td.getByLabel('Token name').fill(`ci-${tag}`)
  await td.getByRole('button', { name: 'Create token' }).click()
  const { d: shown, value: token } = await secretShown(page, 'New token', 'Token')
  assert.match(token, /^atr_sp_/)
  await axe(page, 'the new token')
  await screenshot(page, 'principals-token')
  await shown.getByRole('button', { name: 'Done' }).click()
  await sp.getByText(`ci-${tag}`).waitFor()
  assert.doesNotMatch(await page.content(), new RegExp(token), 'the token is not shown again')
  const me = await fetch(`${base}/api/v1/me`, { headers: { Authorization: `Bearer ${token}` } })
  assert.equal(me.status, 200)
  assert.equal((await me.json()).credential, 'service_principal_token')
  await screenshot(page, 'principals')

  // The page on a phone.
  const small = await signInAs(browser, email, password, '/admin/principals', phone)
  await small.getByRole('heading', { name: 'Service principals', level: 1 }).waitFor()
  await noSideways(small, 'the service principals page')
  await axe(small, 'the service principals page on a phone')
  await screenshot(small, 'principals-phone')
  noProblems(small)
  await small.context().close()

  // Revoke, confirmed: 401.
  await sp.getByRole('button', { name: `Revoke token ci-${tag}` }).click()
  const rv = page.getByRole('dialog', { name: 'Revoke this token?' })
  await rv.waitFor()
  await axe(page, 'the revoke confirmation')
  await rv.getByRole('button', { name: 'Revoke token' }).click()
  await sp.getByText('No tokens.').waitFor()
  assert.equal((await fetch(`${base}/api/v1/me`, { headers: { Authorization: `Bearer ${token}` } })).status, 401)

  // Delete the principal, confirmed.
  await sp.getByRole('button', { name: `Delete service principal ${name}` }).click()
  const del = page.getByRole('dialog', { name: 'Delete this service principal?' })
  await del.waitFor()
  assert.match(await del.innerText(), /tokens/)
  await del.getByRole('button', { name: 'Delete service principal' }).click()
  await sp.waitFor({ state: 'detached' })
  noProblems(page)
})
