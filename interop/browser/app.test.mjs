// What every page's script shares, from app.js (loaded on every page; here
// the sign-in page's): the words a person reads when a request fails
// (Atrium.problemText, Atrium.fetchJSON), and how a dialog opens and closes
// (Atrium.openDialog).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { base, launch, newPage, noProblems } from './browser.mjs'

let browser, page

before(async () => {
  browser = await launch()
  page = await newPage(browser)
  await page.goto(base + '/signin')
  await page.waitForFunction(() => window.Atrium && typeof window.Atrium.problemText === 'function')
})
after(async () => { await browser?.close() })

// text words r as the page would, with labels (a field's name to its label)
// when given.
function text (r, labels) {
  return page.evaluate(([r, labels]) => window.Atrium.problemText(r, labels ? (n) => labels[n] || n : undefined), [r, labels])
}

const cases = [
  {
    name: 'the server cannot be reached',
    r: { status: 0, body: null },
    want: 'The server cannot be reached. Check your connection and try again.'
  },
  {
    name: 'the session has ended',
    r: { status: 401, body: { status: 401, title: 'Unauthorized', detail: 'Sign in first.' } },
    want: 'You are signed out. Reload the page and sign in again.'
  },
  {
    name: 'a refusal without field errors reads as its detail',
    r: { status: 409, body: { status: 409, title: 'Conflict', detail: 'The user is already a member of this team.' } },
    want: 'The user is already a member of this team.'
  },
  {
    name: 'a validation problem whose detail restates an error: the errors alone, by label',
    r: {
      status: 422,
      body: {
        status: 422,
        title: 'Unprocessable Entity',
        detail: 'The request is not valid: body.name must not be empty (and 1 more).',
        errors: [{ location: 'body.name', message: 'must not be empty' }, { location: 'body.seats', message: 'must be at least 1.' }]
      }
    },
    labels: { name: 'Organisation name', seats: 'Seats' },
    want: 'Organisation name: must not be empty; Seats: must be at least 1.'
  },
  {
    name: 'without labels a field is named by its location',
    r: { status: 400, body: { status: 400, title: 'Bad Request', detail: 'The upload cannot be created.', errors: [{ location: 'header.Upload-Metadata', message: 'The metadata must carry the file name.' }] } },
    want: 'The upload cannot be created. Upload-Metadata: The metadata must carry the file name.'
  },
  {
    name: 'a refusal of permission says how a stale page recovers',
    r: { status: 403, body: { status: 403, title: 'Forbidden', detail: 'You may not change this book' } },
    want: 'You may not change this book. If you signed in again since this page opened, reload it.'
  },
  {
    name: 'an answer without a problem body names its status',
    r: { status: 502, body: null },
    want: 'The server answered 502. Try again.'
  },
  {
    name: 'a body with a title only',
    r: { status: 413, body: { title: 'Request Entity Too Large' } },
    want: 'Request Entity Too Large'
  }
]

for (const c of cases) {
  test(c.name, async () => {
    assert.equal(await text(c.r, c.labels), c.want)
  })
}

test("a real refusal from the server reads the same (the API without a session: 401)", async () => {
  const got = await page.evaluate(() => window.Atrium.request('POST', '/api/v1/drive/folders', { name: 'x' })
    .then((r) => [r.status, window.Atrium.problemText(r)]))
  assert.deepEqual(got, [401, 'You are signed out. Reload the page and sign in again.'])
  // The browser's console saw the refused request; nothing else.
  page.problems = page.problems.filter((p) => !/status of 401/.test(p))
  noProblems(page)
})

test('fetchJSON rejects a refusal with the same words and its status', async () => {
  const got = await page.evaluate(() => window.Atrium.fetchJSON('POST', '/api/v1/drive/folders', { name: 'x' })
    .then(() => 'resolved', (err) => [err.status, err.message]))
  assert.deepEqual(got, [401, 'You are signed out. Reload the page and sign in again.'])
  page.problems = page.problems.filter((p) => !/status of 401/.test(p))
  assert.deepEqual(await page.evaluate(() => window.Atrium.fetchJSON('GET', '/healthz')), { status: 'ok' })
})

// addDialog adds a dialog with an old error and a Cancel button, and a button
// that opens it, to the page; returns nothing (the ids are fixed).
function addDialog () {
  return page.evaluate(() => {
    document.getElementById('t-opener')?.remove()
    document.getElementById('t-dialog')?.remove()
    const opener = document.createElement('button')
    opener.id = 't-opener'
    opener.textContent = 'Open the test dialog'
    const d = document.createElement('dialog')
    d.id = 't-dialog'
    d.setAttribute('aria-label', 'Test dialog')
    const err = document.createElement('p')
    err.setAttribute('role', 'alert')
    err.textContent = 'An error of the last time.'
    const name = document.createElement('input')
    name.id = 't-name'
    name.setAttribute('aria-label', 'Name')
    const cancel = document.createElement('button')
    cancel.type = 'button'
    cancel.dataset.close = ''
    cancel.textContent = 'Cancel'
    d.append(err, name, cancel)
    document.body.append(opener, d)
  })
}
function openTestDialog () {
  return page.evaluate(() => {
    const opener = document.getElementById('t-opener')
    opener.focus()
    window.Atrium.openDialog(document.getElementById('t-dialog'), document.getElementById('t-name'))
  })
}
const focused = () => page.evaluate(() => document.activeElement && document.activeElement.id)

test('a dialog opens with its old errors gone and the focus where the page puts it', async () => {
  await addDialog()
  await openTestDialog()
  const dialog = page.getByRole('dialog', { name: 'Test dialog' })
  await dialog.waitFor()
  assert.equal(await focused(), 't-name')
  const alert = dialog.locator('[role="alert"]')
  assert.equal(await alert.isHidden(), true, 'the old error is hidden')
  assert.equal(await alert.evaluate((e) => e.textContent), '')
})

for (const how of ['Cancel', 'Escape']) {
  test(`${how} closes the dialog and gives the focus back to its opener`, async () => {
    await addDialog()
    await openTestDialog()
    const dialog = page.getByRole('dialog', { name: 'Test dialog' })
    await dialog.waitFor()
    if (how === 'Cancel') await dialog.getByRole('button', { name: 'Cancel' }).click()
    else await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    assert.equal(await focused(), 't-opener')
    noProblems(page)
  })
}
