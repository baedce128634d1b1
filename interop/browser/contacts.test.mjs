// The contacts page: a person adds a contact, finds it, edits and deletes it,
// imports a vCard file, and sees the organisation's directory — in a browser,
// through the REST API the page calls.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { launch, noProblems, axe, signIn, screenshot } from './browser.mjs'

let browser
before(async () => { browser = await launch() })
after(async () => { await browser?.close() })

// Names unique to this run, so that the suite can run again on the same data.
const tag = Date.now().toString(36)
const first = 'Ada'
const last = `Byron${tag}`
const name = `${first} ${last}`

// watchDialogs records any alert(), confirm() or prompt() as a problem.
function watchDialogs (page) {
  page.on('dialog', d => { page.problems.push(`dialog: ${d.message()}`); d.dismiss() })
}

function contactItem (page, text) {
  return page.locator('.contact-list li', { has: page.locator('.cname', { hasText: text }) })
}

test('a contact is created, found, edited, made a favourite and deleted', async () => {
  const page = await signIn(browser, '/contacts')
  watchDialogs(page)
  await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor()
  await axe(page, 'the contacts list')
  await screenshot(page, 'contacts-list-before')

  await page.getByRole('button', { name: 'New contact' }).click()
  const dialog = page.getByRole('dialog', { name: 'New contact' })
  await dialog.waitFor()
  assert.equal(await page.evaluate(() => document.activeElement.id), 'c-first', 'the form opens with the focus on the first name')
  await axe(page, 'the new contact form')
  await screenshot(page, 'contacts-form')
  await page.getByLabel('First name').fill(first)
  await page.getByLabel('Last name').fill(last)
  await page.getByLabel('Email').fill(`ada.${tag}@example.test`)
  await page.getByRole('button', { name: 'Save' }).click()
  await contactItem(page, name).waitFor()
  assert.match(await page.getByRole('status').first().innerText(), new RegExp(`Added ${name}`))
  assert.match(await contactItem(page, name).innerText(), new RegExp(`ada\\.${tag}@example\\.test`))
  await screenshot(page, 'contacts-list')

  // Search (the server's, through the contacts API).
  await page.getByLabel('Search contacts').fill(last.toLowerCase())
  await page.getByLabel('Search contacts').press('Enter')
  await page.waitForURL(u => u.searchParams.get('q') === last.toLowerCase())
  await contactItem(page, name).waitFor()
  await axe(page, 'the search results')

  // A wrong e-mail address is refused by the API and shown beside its field.
  await page.getByRole('button', { name: `Edit ${name}` }).click()
  await page.getByRole('dialog', { name: `Edit ${name}` }).waitFor()
  await page.getByLabel('Email').fill('not an address')
  await page.getByRole('button', { name: 'Save' }).click()
  const err = page.locator('#contact-form .field-error')
  await err.waitFor()
  assert.match(await err.innerText(), /e-mail address/)
  assert.equal(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true')
  // Chromium logs the API's 422 answer as a failed resource: the one expected here.
  const refused = page.problems.filter(p => /status of 422/.test(p))
  assert.equal(refused.length, 1, 'the API refused the address once')
  page.problems = page.problems.filter(p => !/status of 422/.test(p))
  await axe(page, 'the contact form with an error')
  await screenshot(page, 'contacts-form-error')

  // Edit: fix the address, add a phone; the change is there after a reload.
  await page.getByLabel('Email').fill(`ada.${tag}@example.test`)
  await page.getByLabel('Phone', { exact: true }).fill('+44 20 7946 0000')
  await page.getByRole('button', { name: 'Add phone number' }).click()
  await page.getByLabel('Phone 2').fill('+44 20 7946 0001')
  await page.getByLabel('Type 2').selectOption('work')
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('status').filter({ hasText: `Saved ${name}` }).waitFor()
  await page.reload()
  assert.match(await contactItem(page, name).innerText(), /\+44 20 7946 0000/)
  await page.getByRole('button', { name: `Edit ${name}` }).click()
  await page.getByRole('dialog', { name: `Edit ${name}` }).waitFor()
  assert.equal(await page.getByLabel('Phone 2').inputValue(), '+44 20 7946 0001')
  await page.getByRole('button', { name: 'Cancel' }).first().click()

  // Favourite, then the favourites filter.
  const star = page.getByRole('button', { name: `Favourite ${name}` })
  await star.click()
  await page.waitForFunction(n => document.querySelector(`button[aria-label="Favourite ${n}"]`).getAttribute('aria-pressed') === 'true', name)
  await page.goto(page.url().replace(/\?.*$/, '') + '?fav=1')
  await contactItem(page, name).waitFor()

  // Delete, with a confirmation.
  await page.getByRole('button', { name: `Delete ${name}` }).click()
  const confirm = page.getByRole('dialog', { name: 'Delete contact?' })
  await confirm.waitFor()
  await axe(page, 'the delete dialog')
  await screenshot(page, 'contacts-delete')
  await confirm.getByRole('button', { name: 'Delete', exact: true }).click()
  await page.getByRole('status').filter({ hasText: `Deleted ${name}` }).waitFor()
  assert.equal(await contactItem(page, name).count(), 0)
  noProblems(page)
})

test('a vCard file is imported with a summary; contacts move to another address book', async () => {
  const page = await signIn(browser, '/contacts')
  watchDialogs(page)
  const vcf = [
    'BEGIN:VCARD', 'VERSION:3.0', `N:Imported${tag};Grace;;;`, `FN:Grace Imported${tag}`,
    'EMAIL;TYPE=INTERNET,WORK:grace@example.test', 'TEL;TYPE=CELL:+1 555 0100', 'ORG:Navy;Research', 'END:VCARD',
    'BEGIN:VCARD', 'VERSION:3.0', `FN:Broken${tag}`, 'EMAIL:not an address', 'END:VCARD', ''
  ].join('\r\n')
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Import', exact: true }).click()])
  await chooser.setFiles({ name: 'people.vcf', mimeType: 'text/vcard', buffer: Buffer.from(vcf) })
  const summary = page.locator('#import-summary')
  await summary.getByText(/Imported 1 of 2 contacts from people\.vcf/).waitFor()
  // The server reports the broken card by its position in the file.
  assert.match(await summary.innerText(), /Card 2: emails\[0\]\.value/)
  await screenshot(page, 'contacts-import-summary')
  await axe(page, 'the import summary')
  await page.reload()
  await contactItem(page, `Grace Imported${tag}`).waitFor()

  // A new address book, then the imported contact moves into it.
  const bookName = `Team ${tag}`
  await page.getByLabel('New address book').fill(bookName)
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.getByRole('heading', { name: bookName, level: 2 }).waitFor()
  await page.getByRole('link', { name: /^Contacts \d+ contacts?$/ }).click()
  await page.getByRole('checkbox', { name: `Select Grace Imported${tag}` }).check()
  await page.getByLabel('Move the selected contacts to').selectOption({ label: bookName })
  await page.getByRole('button', { name: 'Move', exact: true }).click()
  await page.getByRole('status').filter({ hasText: `Moved 1 contact to ${bookName}` }).waitFor()
  assert.equal(await contactItem(page, `Grace Imported${tag}`).count(), 0)
  await page.getByRole('link', { name: new RegExp(`^${bookName} 1 contact$`) }).click()
  await contactItem(page, `Grace Imported${tag}`).waitFor()
  // The book goes, with its contacts.
  await page.getByRole('button', { name: 'Delete this address book' }).click()
  await page.getByRole('dialog', { name: 'Delete address book?' }).getByRole('button', { name: 'Delete', exact: true }).click()
  await page.waitForURL(u => u.search === '')
  assert.equal(await page.getByRole('link', { name: new RegExp(`^${bookName}`) }).count(), 0)
  noProblems(page)
})

test('Export downloads the address book as one .vcf; Import puts it into another book', async () => {
  const page = await signIn(browser, '/contacts')
  watchDialogs(page)
  // Two contacts in the default book, one with several e-mail addresses and unicode.
  for (const [fn, ln, emails] of [['Zoë', `Müller${tag}`, ['zoe@example.test', 'zoë@bücher.example']], ['李', `小龍${tag}`, ['bruce@example.test']]]) {
    await page.getByRole('button', { name: 'New contact' }).click()
    await page.getByLabel('First name').fill(fn)
    await page.getByLabel('Last name').fill(ln)
    for (const [i, e] of emails.entries()) {
      if (i) await page.getByRole('button', { name: 'Add e-mail address' }).click()
      await page.getByLabel(i ? `Email ${i + 1}` : 'Email', { exact: true }).fill(e)
    }
    await page.getByRole('button', { name: 'Save' }).click()
    await contactItem(page, `${fn} ${ln}`).waitFor()
  }
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export', exact: true }).click()])
  assert.equal(download.suggestedFilename(), 'Contacts.vcf')
  const vcf = fs.readFileSync(await download.path(), 'utf8')
  const cards = (vcf.match(/^BEGIN:VCARD\r$/gm) || []).length
  assert.ok(cards >= 2, `the export holds ${cards} cards`)
  assert.match(vcf, new RegExp(`FN:Zoë Müller${tag}`))
  assert.match(vcf, /zoë@bücher\.example/)

  const bookName = `Copy ${tag}`
  await page.getByLabel('New address book').fill(bookName)
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.getByRole('heading', { name: bookName, level: 2 }).waitFor()
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Import', exact: true }).click()])
  await chooser.setFiles({ name: 'Contacts.vcf', mimeType: 'text/vcard', buffer: Buffer.from(vcf) })
  await page.locator('#import-summary').getByText(new RegExp(`Imported ${cards} of ${cards} contacts from Contacts\\.vcf\\. \\(${cards} new\\)`)).waitFor()
  await axe(page, 'the summary of a whole-book import')
  await page.getByRole('link', { name: 'Show the imported contacts' }).click()
  await contactItem(page, `Zoë Müller${tag}`).waitFor()
  await contactItem(page, `李 小龍${tag}`).waitFor()
  await page.getByRole('button', { name: `Edit Zoë Müller${tag}` }).click()
  assert.equal(await page.getByLabel('Email 2', { exact: true }).inputValue(), 'zoë@bücher.example')
  await page.getByRole('button', { name: 'Cancel' }).first().click()
  // An unreadable file changes nothing and says why.
  const [again] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Import', exact: true }).click()])
  await again.setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('just some notes') })
  await page.locator('#import-summary').getByText(/notes\.txt was not imported: .*not a vCard file/).waitFor()
  assert.equal(page.problems.filter(p => /status of 422/.test(p)).length, 1)
  page.problems = page.problems.filter(p => !/status of 422/.test(p))
  // Clean up: the copy, and the two contacts of the default book.
  await page.getByRole('button', { name: 'Delete this address book' }).click()
  await page.getByRole('dialog', { name: 'Delete address book?' }).getByRole('button', { name: 'Delete', exact: true }).click()
  await page.waitForURL(u => u.search === '')
  for (const n of [`Zoë Müller${tag}`, `李 小龍${tag}`]) {
    await page.getByRole('button', { name: `Delete ${n}` }).click()
    await page.getByRole('dialog', { name: 'Delete contact?' }).getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('status').filter({ hasText: `Deleted ${n}` }).waitFor()
  }
  noProblems(page)
})

test('the directory shows the organisation’s people, markup as text', async () => {
  const page = await signIn(browser, '/contacts/directory')
  watchDialogs(page)
  await page.getByRole('heading', { name: 'People of your organisation' }).waitFor()
  await page.getByText('<img src=x onerror=alert(1)>').first().waitFor()
  assert.equal(await page.locator('main img').count(), 0, 'a name became an element')
  assert.ok(await page.getByRole('link', { name: /as vCard$/ }).count() >= 1)
  await axe(page, 'the directory')
  await screenshot(page, 'contacts-directory')
  // A person of the directory is copied into the address book, name as text.
  const pat = await page.locator('.contact-list .cname', { hasText: '<img src=x onerror=alert(1)>' }).first().innerText()
  await page.getByRole('button', { name: `Add to my contacts: ${pat}` }).click()
  await page.getByRole('status').filter({ hasText: `Added ${pat} to your contacts.` }).waitFor()
  await page.getByRole('link', { name: 'My address books' }).click()
  await contactItem(page, pat).first().waitFor()
  assert.equal(await page.locator('main img').count(), 0, 'a name became an element')
  await page.getByRole('button', { name: `Delete ${pat}` }).first().click()
  const confirm = page.getByRole('dialog', { name: 'Delete contact?' })
  assert.match(await confirm.innerText(), /<img src=x onerror=alert\(1\)> will be deleted from Contacts/)
  await confirm.getByRole('button', { name: 'Delete', exact: true }).click()
  await page.getByRole('status').filter({ hasText: 'Deleted' }).waitFor()
  assert.equal(await page.locator('main img').count(), 0, 'a name became an element')
  noProblems(page)
})

test('the contacts page on a phone (390×844) has no sideways scrolling', async () => {
  const page = await signIn(browser, '/contacts', { viewport: { width: 390, height: 844 } })
  watchDialogs(page)
  await page.getByRole('button', { name: 'New contact' }).click()
  await page.getByLabel('First name').fill('Phone')
  await page.getByLabel('Last name').fill(`Person${tag}`)
  await page.getByRole('button', { name: 'Save' }).click()
  await contactItem(page, `Phone Person${tag}`).waitFor()
  const wide = () => page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(await wide() <= 390, `the list is ${await wide()} px wide`)
  await axe(page, 'the contacts list on a phone')
  await screenshot(page, 'contacts-phone-list')
  await page.getByRole('button', { name: `Edit Phone Person${tag}` }).click()
  await page.getByRole('dialog').waitFor()
  await page.getByRole('button', { name: 'Add postal address' }).click()
  assert.ok(await wide() <= 390, `the form is ${await wide()} px wide`)
  const dw = await page.evaluate(() => { const d = document.querySelector('dialog[open]'); return d.scrollWidth - d.clientWidth })
  assert.ok(dw <= 0, `the form scrolls sideways by ${dw} px`)
  await axe(page, 'the contact form on a phone')
  await screenshot(page, 'contacts-phone-form')
  await page.getByRole('button', { name: 'Cancel' }).first().click()
  await page.goto(page.url().replace(/\/contacts.*$/, '/contacts/directory'))
  assert.ok(await wide() <= 390, `the directory is ${await wide()} px wide`)
  await screenshot(page, 'contacts-phone-directory')
  // Clean up.
  await page.goto(page.url().replace(/\/contacts.*$/, '/contacts'))
  await page.getByRole('button', { name: `Delete Phone Person${tag}` }).click()
  await page.getByRole('dialog', { name: 'Delete contact?' }).getByRole('button', { name: 'Delete', exact: true }).click()
  await page.getByRole('status').filter({ hasText: 'Deleted' }).waitFor()
  noProblems(page)
})
