// Times many small resumable uploads into Atrium, for bench/smalluploads.sh
// (issue 21): N files of SIZE bytes, C at a time, into a fresh folder, with
// tus-js-client (the client of Uppy's Tus plugin). Mode tus: its defaults,
// POST to create, then one PATCH with the bytes. Mode tus-app: as Atrium's
// web app uploads (web/ui/assets/drive.js), a file of up to 64 KiB sent whole
// with the POST that creates its upload (uploadDataDuringCreation, the
// creation-with-upload extension). (The three-step upload is timed by
// bench/presign, a Go client.)
// With ROUNDS (default 1), it does so ROUNDS times in the one node process,
// each round into a fresh folder. A fresh process spends about twice the CPU
// an upload in its first thousand uploads as after two thousand (V8 compiles
// tus-js-client's and node's HTTP code as they get hot), and that CPU, not
// the server, bounds a first round against a fast server: a second round
// times the server with the client warm.
// Prints one line a round: "<mode> <n> <seconds> <files/s> p50 <ms> p99 <ms>
// client-cpu <ms> round <r>", client-cpu this process's own CPU (user and
// system) per upload while the round's uploads ran: one node process runs all
// C uploads.
//
//   node upload.mjs tus|tus-app BASE TOKEN N SIZE C [ROUNDS]
import crypto from 'node:crypto'
import * as tus from 'tus-js-client'

const [mode, base, token, nArg, sizeArg, cArg, roundsArg] = process.argv.slice(2)
const n = Number(nArg), size = Number(sizeArg), c = Number(cArg), rounds = Number(roundsArg ?? 1)
if (!['tus', 'tus-app'].includes(mode) || !base || !token || !(n > 0) || !(size > 0) || !(c > 0) || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: node upload.mjs tus|tus-app BASE TOKEN N SIZE C [ROUNDS]')
  process.exit(2)
}
const auth = { Authorization: `Bearer ${token}` }

async function api(method, path, body) {
  const res = await fetch(base + '/api/v1' + path, {
    method, headers: { ...auth, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) {
    throw new Error(`${method} ${path}: ${res.status} ${text}`)
  }
  return text ? JSON.parse(text) : null
}

function tusUpload(name, bytes, folderID) {
  return new Promise((resolve, reject) => {
    const up = new tus.Upload(bytes, {
      endpoint: base + '/api/v1/drive/tus/',
      headers: auth,
      metadata: { filename: name, filetype: 'application/octet-stream', parent_id: folderID },
      uploadSize: bytes.length,
      uploadDataDuringCreation: mode === 'tus-app' && bytes.length <= 64 * 1024,
      onSuccess: resolve,
      onError: reject,
    })
    up.start()
  })
}

for (let round = 1; round <= rounds; round++) {
  const folder = await api('POST', '/drive/folders', { name: `${mode}-${Date.now()}-${crypto.randomUUID()}` })
  const lat = []
  let next = 0
  const start = performance.now()
  const cpu0 = process.cpuUsage()
  await Promise.all(Array.from({ length: c }, async () => {
    for (let i = next++; i < n; i = next++) {
      const t0 = performance.now()
      await tusUpload(`f${String(i).padStart(5, '0')}.bin`, crypto.randomBytes(size), folder.id)
      lat.push(performance.now() - t0)
    }
  }))
  const secs = (performance.now() - start) / 1000
  const cpu = process.cpuUsage(cpu0)
  lat.sort((a, b) => a - b)
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(2)
  console.log(`${mode} ${n} ${secs.toFixed(2)} ${(n / secs).toFixed(0)} p50 ${q(0.5)} p99 ${q(0.99)} client-cpu ${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} round ${round}`)
}
