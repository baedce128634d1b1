// Screenshots of the web app's main pages for the README, taken from the demo:
//   bash scripts/screenshots.sh        (starts `atrium serve --demo`, runs this)
// Environment: ATRIUM_URL, DEMO_EMAIL, DEMO_PASSWORD, OUT (a folder).
import { launch } from './browser.mjs'

const { ATRIUM_URL: base, DEMO_EMAIL: email, DEMO_PASSWORD: password, OUT: out } = process.env
const pages = [['drive', '/drive'], ['contacts', '/contacts'], ['calendar', '/calendar'], ['settings', '/settings']]

const browser = await launch()
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'Europe/Paris' })
  const page = await context.newPage()
  await page.goto(base + '/')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(u => !u.pathname.startsWith('/signin'))
  for (const [name, path] of pages) {
    const res = await page.goto(base + path)
    if (!res || res.status() !== 200) {
      console.log(`skipped ${name}: ${path} answers ${res && res.status()}`)
      continue
    }
    await page.waitForLoadState('networkidle')
    await page.screenshot({ path: `${out}/${name}.png` })
    console.log(`${out}/${name}.png`)
  }
} finally {
  await browser.close()
}
