// The calendar page: periods, creating, editing, a weekly series and one of
// its occurrences deleted, markup in a title shown as text, the phone layout.
// The browser runs in New York time, whatever the machine's zone.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { launch, signIn, noProblems, axe, screenshot, chooseFiles } from './browser.mjs'

const timezoneId = 'America/New_York'
let browser, page

before(async () => {
  browser = await launch()
  page = await signIn(browser, '/calendar', { timezoneId })
  page.on('dialog', d => { page.problems.push(`dialog: ${d.message()}`); d.dismiss() })
  await page.getByRole('heading', { name: 'Calendar', level: 1 }).waitFor()
})
after(async () => { await browser?.close() })

const button = (name, p = page) => p.getByRole('button', { name, exact: true })
const heading = (p = page) => p.locator('#cal-period')
const view = (p = page) => p.locator('#cal-view')
const loaded = (p = page) => p.locator('#cal-view[aria-busy="false"]').waitFor()

// local returns dates of the browser's zone: today, the 1st of this month
// and the next and previous month's titles.
function local () {
  return page.evaluate(() => {
    const pad = n => String(n).padStart(2, '0')
    const ymd = d => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
    const now = new Date()
    const month = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric' })
    return {
      zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      today: ymd(now),
      tomorrow: ymd(new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1)),
      first: ymd(new Date(now.getFullYear(), now.getMonth(), 1)),
      firstDay: ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'][new Date(now.getFullYear(), now.getMonth(), 1).getDay()],
      month: month.format(now),
      next: month.format(new Date(now.getFullYear(), now.getMonth() + 1, 1)),
      prev: month.format(new Date(now.getFullYear(), now.getMonth() - 1, 1))
    }
  })
}

async function newEvent (title, start, end, more) {
  await button('New event').click()
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('heading', { name: 'New event' }).waitFor()
  await page.getByLabel('Title', { exact: true }).fill(title)
  await page.getByLabel('Start', { exact: true }).fill(start)
  await page.getByLabel('End', { exact: true }).fill(end)
  if (more) await more(dialog)
  await button('Save').click()
  await dialog.waitFor({ state: 'hidden' })
  await loaded()
}

test('the calendar shows the current month and week; Next, Previous and Today change the period', async () => {
  const l = await local()
  assert.equal(l.zone, timezoneId)
  await button('Month').click()
  await loaded()
  assert.equal(await heading().innerText(), l.month)
  await screenshot(page, 'calendar-month')
  await axe(page, 'the calendar, month view')
  await button('Next').click()
  assert.equal(await heading().innerText(), l.next)
  await button('Previous').click()
  await button('Previous').click()
  assert.equal(await heading().innerText(), l.prev)
  await button('Today').click()
  assert.equal(await heading().innerText(), l.month)

  await button('Week').click()
  await loaded()
  const week = await heading().innerText()
  assert.match(week, /^Week of /)
  assert.equal(await view().locator('[aria-current="date"]').count(), 1, 'today is marked in the week')
  await button('Next').click()
  assert.notEqual(await heading().innerText(), week)
  assert.equal(await view().locator('[aria-current="date"]').count(), 0)
  await button('Today').click()
  assert.equal(await heading().innerText(), week)
  await axe(page, 'the calendar, week view')
  await screenshot(page, 'calendar-week')
  noProblems(page)
})

test('New event makes an event shown in the view; it can be edited', async () => {
  const l = await local()
  await button('Week').click()
  await newEvent('Team sync', `${l.today}T10:00`, `${l.today}T11:00`, async dialog => {
    await axe(page, 'the new event form')
    await screenshot(page, 'calendar-form')
    await page.getByLabel('Location', { exact: true }).fill('Room 4')
    // An attendee from the directory, with free/busy shown.
    await page.getByLabel('Invite someone (name or e-mail address)').fill(process.env.PAGES_EMAIL)
    await button('Invite').click()
    await dialog.getByRole('heading', { name: /^Busy on / }).waitFor()
    await axe(page, 'the new event form with an attendee and free/busy')
    await screenshot(page, 'calendar-form-attendee')
  })
  const ev = view().getByRole('button', { name: /Team sync/ })
  await ev.waitFor()
  assert.match(await ev.innerText(), /Room 4/)

  await ev.click()
  await page.getByRole('dialog').getByRole('heading', { name: 'Edit event' }).waitFor()
  assert.equal(await page.getByLabel('Title', { exact: true }).inputValue(), 'Team sync')
  await page.getByLabel('Title', { exact: true }).fill('Team sync (moved)')
  await page.getByLabel('Start', { exact: true }).fill(`${l.today}T14:00`)
  await page.getByLabel('End', { exact: true }).fill(`${l.today}T15:30`)
  await button('Save').click()
  await page.getByRole('dialog').waitFor({ state: 'hidden' })
  const moved = view().getByRole('button', { name: /Team sync \(moved\)/ })
  await moved.waitFor()
  assert.match(await moved.innerText(), /14:00|2:00/)
  assert.equal(await view().getByRole('button', { name: /^[^(]*Team sync$/ }).count(), 0, 'the old title is gone')
  noProblems(page)
})

test('a save that cannot reach the server says so in the form, which keeps what was typed', async () => {
  const l = await local()
  await button('Week').click()
  await loaded()
  // Every change fails as on a dropped connection; reads still work.
  const offline = route => route.request().method() === 'GET' ? route.continue() : route.abort('internetdisconnected')
  await page.route('**/api/v1/**', offline)
  await button('New event').click()
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('heading', { name: 'New event' }).waitFor()
  await page.getByLabel('Title', { exact: true }).fill('Written offline')
  await page.getByLabel('Start', { exact: true }).fill(`${l.today}T08:00`)
  await page.getByLabel('End', { exact: true }).fill(`${l.today}T08:30`)
  await button('Save').click()
  const error = page.locator('#ev-error')
  await error.waitFor()
  assert.equal(await error.innerText(), 'The server cannot be reached. Check your connection and try again.')
  assert.equal(await page.getByLabel('Title', { exact: true }).inputValue(), 'Written offline')
  assert.ok(await dialog.isVisible(), 'the form stays open')

  await page.unroute('**/api/v1/**', offline)
  await button('Save').click()
  await dialog.waitFor({ state: 'hidden' })
  await loaded()
  await view().getByRole('button', { name: /Written offline/ }).waitFor()
  // The aborted request is the browser's console error; nothing else is.
  page.problems = page.problems.filter(p => !/ERR_INTERNET_DISCONNECTED/.test(p))
  noProblems(page)
})

test('the week and day views are hourly grids: an event sits in its hour, sized by its length, overlaps side by side', async () => {
  const l = await local()
  await button('Week').click()
  await loaded()
  const grid = view().locator('.cal-tg')
  await grid.waitFor()
  assert.equal(await view().locator('.cal-tg-col').count(), 7, 'a column per day')
  assert.equal(await view().locator('.cal-tg-hour').count(), 24, 'an hour per row')
  // The grid opens at working hours, not at midnight.
  await page.waitForFunction(() => document.querySelector('#cal-view .cal-tg-scroll').scrollTop > 0)
  // No hour label is cut in two by the top of the grid (a label's text is the
  // first line of its row).
  const cut = await view().locator('.cal-tg-scroll').evaluate(sc => {
    const top = sc.getBoundingClientRect().top
    return [...sc.querySelectorAll('.cal-tg-hour')].filter(h => h.textContent).map(h => {
      const t = h.getBoundingClientRect().top
      return { label: h.textContent, top: t, bottom: t + parseFloat(getComputedStyle(h).fontSize) }
    }).filter(l => l.top < top && l.bottom > top).map(l => l.label)
  })
  assert.deepEqual(cut, [], 'hour labels cut off at the top of the grid')
  await newEvent('Grid one', `${l.today}T09:00`, `${l.today}T10:30`)
  await newEvent('Grid two', `${l.today}T09:30`, `${l.today}T10:00`)
  const one = view().getByRole('button', { name: /Grid one/ })
  const two = view().getByRole('button', { name: /Grid two/ })
  await one.waitFor()
  await two.waitFor()
  const box = async loc => loc.evaluate(e => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height, off: e.offsetTop } })
  const row = h => view().locator(`.cal-tg-hour[data-hour="${h}"]`)
  const [r8, r9, r10, r11, b1, b2] = await Promise.all([row(8), row(9), row(10), row(11)].map(box).concat([box(one), box(two)]))
  const hour = r9.top - r8.top
  assert.ok(b1.top > r8.top, `Grid one (top ${b1.top}) is below the 8:00 row (${r8.top})`)
  // offsetTop: within the grid, without the labels' nudge upwards.
  assert.ok(Math.abs(b1.off - r9.off) < 2, `Grid one starts at the 9:00 line (${b1.off} vs ${r9.off})`)
  assert.ok(b1.bottom > r10.top && b1.bottom < r11.top, 'an hour and a half tall')
  assert.ok(Math.abs(b1.height - 1.5 * hour) < 4, `height ${b1.height} for 1.5 h of ${hour} px`)
  assert.ok(b2.left >= b1.right - 2 || b1.left >= b2.right - 2, 'overlapping events stand side by side')
  assert.equal(await one.evaluate(e => e.closest('.cal-tg-col').dataset.day), l.today, 'in today\'s column')
  assert.equal(await view().locator('.cal-tg-now:not([hidden])').count(), 1, 'the current time line')
  await axe(page, 'the week grid with events')
  await screenshot(page, 'calendar-week-grid')

  await button('Day').click()
  await loaded()
  assert.equal(await view().locator('.cal-tg-col').count(), 1, 'the day is one column')
  await two.waitFor()
  const d1 = await box(view().getByRole('button', { name: /Grid one/ }))
  const d9 = await box(row(9))
  assert.ok(Math.abs(d1.off - d9.off) < 2, `in the day view too, at 9:00 (${d1.off} vs ${d9.off})`)
  await axe(page, 'the day grid')
  await screenshot(page, 'calendar-day-grid')

  // Clicking an empty slot opens a new event at that time.
  const c = await box(view().locator('.cal-tg-col'))
  await page.mouse.click(c.right - 5, (await box(row(17))).top + 15) // below the 17:00 line
  await page.getByRole('dialog').getByRole('heading', { name: 'New event' }).waitFor()
  assert.equal(await page.getByLabel('Start', { exact: true }).inputValue(), `${l.today}T17:00`)
  await button('Cancel').click()
  for (const t of ['Grid one', 'Grid two']) {
    await view().getByRole('button', { name: new RegExp(t) }).click()
    await page.getByRole('dialog').getByRole('heading', { name: 'Edit event' }).waitFor()
    await button('Delete').click()
    await button('Yes, delete').click()
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    await view().getByRole('button', { name: new RegExp(t) }).waitFor({ state: 'detached' })
  }
  noProblems(page)
})

test('a weekly event shows several occurrences in the month; one occurrence is deleted alone', async () => {
  const l = await local()
  await button('Month').click()
  await loaded()
  await newEvent('Weekly review', `${l.first}T08:00`, `${l.first}T09:00`, async () => {
    await page.getByLabel('Repeats', { exact: true }).selectOption('WEEKLY')
    assert.equal(await page.locator('#ev-rule').innerText(), `Rule: FREQ=WEEKLY;BYDAY=${l.firstDay}`, 'a weekly rule repeats on the start\'s weekday')
  })
  const occ = view().getByRole('button', { name: /Weekly review/ })
  await occ.first().waitFor()
  const n = await occ.count()
  assert.ok(n >= 4, `${n} occurrences in the month view`)
  await screenshot(page, 'calendar-month-weekly')

  await occ.nth(1).click()
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('heading', { name: 'Edit event' }).waitFor()
  await dialog.getByRole('radio', { name: 'Only this one' }).check()
  await axe(page, 'the edit form of an occurrence')
  await button('Delete').click()
  await button('Yes, delete').click()
  await dialog.waitFor({ state: 'hidden' })
  await loaded()
  await page.waitForFunction(k => [...document.querySelectorAll('#cal-view button')].filter(b => b.textContent.includes('Weekly review')).length === k, n - 1)
  assert.equal(await occ.count(), n - 1, 'only one occurrence is gone')

  // This one and the following get a new title; the earlier keep theirs.
  await occ.nth(2).click()
  await dialog.getByRole('heading', { name: 'Edit event' }).waitFor()
  await dialog.getByRole('radio', { name: 'This one and the following' }).check()
  await page.getByLabel('Title', { exact: true }).fill('Weekly review v2')
  await button('Save').click()
  await dialog.waitFor({ state: 'hidden' })
  await page.waitForFunction(k => [...document.querySelectorAll('#cal-view button')].filter(b => b.textContent.includes('Weekly review v2')).length === k, n - 3)
  assert.equal(await occ.count(), n - 1, 'the series keeps its occurrences')
  await screenshot(page, 'calendar-month-split')
  noProblems(page)
})

test('markup in a title shows as text and runs nothing', async () => {
  const l = await local()
  const title = '<img src=x onerror=alert(1)>'
  await button('Week').click()
  await newEvent(title, `${l.today}T12:00`, `${l.today}T12:30`)
  const ev = view().getByRole('button', { name: title })
  await ev.waitFor()
  assert.ok((await ev.innerText()).includes(title))
  assert.equal(await page.locator('#cal-view img, #cal-list img').count(), 0)
  await page.waitForTimeout(300) // an onerror would fire by now
  await axe(page, 'the week with events')
  await screenshot(page, 'calendar-week-events')
  noProblems(page)
})

test('calendars: made with a colour, hidden and shown, imported into, exported, renamed and deleted; an all-day event', async () => {
  const l = await local()
  await button('Month').click()
  await loaded()
  await button('New calendar').click()
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('heading', { name: 'New calendar' }).waitFor()
  await page.getByLabel('Name', { exact: true }).fill('Team <b>')
  await page.getByLabel('Colour', { exact: true }).fill('#1b7f3b')
  assert.equal(await page.getByLabel('Time zone', { exact: true }).inputValue(), timezoneId)
  await axe(page, 'the new calendar form')
  await button('Save calendar').click()
  await dialog.waitFor({ state: 'hidden' })
  const box = page.getByRole('checkbox', { name: 'Team <b>', exact: true })
  await box.waitFor()

  const d = s => s.replace(/-/g, '')
  const ics = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//browser test//EN', 'BEGIN:VEVENT', 'UID:imported-1@browser.test',
    'DTSTAMP:20260101T000000Z', `DTSTART;VALUE=DATE:${d(l.today)}`, `DTEND;VALUE=DATE:${d(l.tomorrow)}`, 'SUMMARY:Imported holiday',
    'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n')
  await chooseFiles(page.getByLabel('iCalendar file (.ics)'), { name: 'holiday.ics', mimeType: 'text/calendar', buffer: Buffer.from(ics) })
  await page.getByLabel('Into', { exact: true }).selectOption({ label: 'Team <b>' })
  await button('Import').click()
  await page.locator('#cal-import-result').getByText('Imported 1, updated 0, skipped 0.').waitFor()
  const imported = view().getByRole('button', { name: /Imported holiday/ })
  await imported.waitFor()
  assert.equal(await imported.count(), 1, 'an all-day event of one day shows on one day')
  assert.equal(await imported.evaluate(b => getComputedStyle(b).borderLeftColor), 'rgb(27, 127, 59)', 'events take their calendar\'s colour')
  await screenshot(page, 'calendar-two-calendars')

  await box.uncheck()
  await page.waitForFunction(() => ![...document.querySelectorAll('#cal-view button')].some(b => b.textContent.includes('Imported holiday')))
  await box.check()
  await imported.waitFor()

  const [download] = await Promise.all([page.waitForEvent('download'),
    page.getByRole('link', { name: 'Export calendar Team <b> (.ics)' }).click()])
  assert.match(fs.readFileSync(await download.path(), 'utf8'), /SUMMARY:Imported holiday/)

  // An all-day event through the form.
  await button('New event').click()
  await page.getByLabel('Title', { exact: true }).fill('Offsite')
  await page.getByLabel('All day', { exact: true }).check()
  await page.getByLabel('Start', { exact: true }).fill(l.today)
  await page.getByLabel('End', { exact: true }).fill(l.tomorrow)
  await button('Save').click()
  await dialog.waitFor({ state: 'hidden' })
  const offsite = view().getByRole('button', { name: /Offsite/ })
  await offsite.first().waitFor()
  assert.equal(await offsite.count(), 2, 'a two-day event shows on both days')
  assert.match(await offsite.first().innerText(), /All day/)

  await page.getByRole('button', { name: 'Edit calendar Team <b>' }).click()
  await page.getByLabel('Name', { exact: true }).fill('Team')
  await button('Save calendar').click()
  await page.getByRole('checkbox', { name: 'Team', exact: true }).waitFor()
  await page.getByRole('button', { name: 'Edit calendar Team' }).click()
  await button('Delete calendar').click()
  await button('Yes, delete the calendar').click()
  await dialog.waitFor({ state: 'hidden' })
  await page.getByRole('checkbox', { name: 'Team', exact: true }).waitFor({ state: 'detached' })
  await imported.waitFor({ state: 'detached' })
  await axe(page, 'the month after deleting a calendar')
  noProblems(page)
})

test('the phone layout at 390×844 has no sideways scrolling', async () => {
  const phone = await signIn(browser, '/calendar', { timezoneId, viewport: { width: 390, height: 844 } })
  await loaded(phone)
  const wide = async what => {
    const width = await phone.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(width <= 390, `${what}: page is ${width} px wide`)
  }
  for (const v of ['Week', 'Month', 'Day']) {
    await button(v, phone).click()
    await loaded(phone)
    await view(phone).getByRole('button', { name: /Team sync/ }).first().waitFor({ state: 'attached' })
    await wide(`${v} view`)
    await axe(phone, `the ${v.toLowerCase()} view on a phone`)
    await screenshot(phone, `calendar-phone-${v.toLowerCase()}`)
  }
  await button('New event', phone).click()
  await phone.getByRole('dialog').waitFor()
  await wide('the event form')
  await axe(phone, 'the event form on a phone')
  await screenshot(phone, 'calendar-phone-form')
  noProblems(phone)
})

test('tasks: a due-date list; one is made, done and undone, and deleted; markup in a title is text', async () => {
  const l = await local()
  const tasks = page.locator('#task-list')
  await page.getByLabel('New task', { exact: true }).fill('File the <b>taxes</b>')
  await page.getByLabel('Due', { exact: true }).fill(l.tomorrow)
  await button('Add task').click()
  const done = page.getByRole('checkbox', { name: 'Done: File the <b>taxes</b>', exact: true })
  await done.waitFor()
  assert.equal(await tasks.locator('b').count(), 0, 'markup in a title is shown as text')
  assert.match(await tasks.innerText(), /File the <b>taxes<\/b>\s*Due /)
  await page.getByLabel('New task', { exact: true }).fill('Someday')
  await button('Add task').click()
  await page.getByRole('checkbox', { name: 'Done: Someday', exact: true }).waitFor()
  const order = await tasks.locator('.task-title').allInnerTexts()
  assert.deepEqual(order.slice(0, 2), ['File the <b>taxes</b>', 'Someday'], 'a task with a due date comes before one without')
  await axe(page, 'the calendar with tasks')
  await screenshot(page, 'calendar-tasks')

  await done.check()
  await page.locator('#task-list li.done').first().waitFor()
  assert.deepEqual((await tasks.locator('.task-title').allInnerTexts()).slice(-1), ['File the <b>taxes</b>'], 'a done task goes last')
  await page.getByRole('checkbox', { name: 'Done: File the <b>taxes</b>', exact: true }).uncheck()
  await page.waitForFunction(() => document.querySelectorAll('#task-list li.done').length === 0)

  for (const name of ['File the <b>taxes</b>', 'Someday']) {
    await button(`Delete task ${name}`).click()
    await page.getByRole('checkbox', { name: `Done: ${name}`, exact: true }).waitFor({ state: 'detached' })
  }
  noProblems(page)
})
