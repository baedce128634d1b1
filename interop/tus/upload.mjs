// Uploads a file to Atrium's resumable upload endpoint with tus-js-client and
// prints one JSON line: {file_id, status, upload_url, size, resumed_from}.
//
//   node upload.mjs resume ENDPOINT TOKEN FILE STORE
//     reads FILE as a stream in 2 MiB chunks and aborts mid-chunk past half of
//     it; then a new Upload finds the stored fingerprint in STORE (tus-js-client's
//     FileUrlStorage), asks the server for its offset (HEAD) and completes.
//   node upload.mjs defaults ENDPOINT TOKEN FILE
//     tus-js-client's defaults (those of Uppy's Tus plugin): the whole file as
//     one PATCH, no fingerprint stored.
import fs from 'node:fs'
import path from 'node:path'
import * as tus from 'tus-js-client'

const [mode, endpoint, token, file, store] = process.argv.slice(2)
if (!['resume', 'defaults'].includes(mode) || !endpoint || !token || !file || (mode === 'resume' && !store)) {
  console.error('usage: node upload.mjs resume ENDPOINT TOKEN FILE STORE | defaults ENDPOINT TOKEN FILE')
  process.exit(2)
}
const size = fs.statSync(file).size
const result = { size, resumed_from: 0, file_id: '', status: '', upload_url: '' }

// run starts one Upload and settles when it succeeds, or when it is aborted
// after abortAfter bytes (0: never).
function run({ input, options, resume, abortAfter }) {
  return new Promise((resolve, reject) => {
    let aborted = false
    const upload = new tus.Upload(input, {
      endpoint,
      headers: { Authorization: `Bearer ${token}` },
      metadata: { filename: path.basename(file), filetype: 'application/octet-stream' },
      ...options,
      onProgress(sent) {
        if (abortAfter > 0 && !aborted && sent >= abortAfter) {
          aborted = true
          upload.abort().then(() => resolve({ aborted: true, url: upload.url }), reject)
        }
      },
      onAfterResponse(req, res) {
        if (req.getMethod() === 'HEAD') {
          result.resumed_from = Number(res.getHeader('Upload-Offset'))
        }
        if (res.getHeader('Atrium-Upload-Status')) {
          result.status = res.getHeader('Atrium-Upload-Status')
          result.file_id = res.getHeader('Atrium-File-Id') || ''
        }
      },
      onSuccess() {
        resolve({ aborted: false, url: upload.url })
      },
      onError: reject,
    })
    const go = async () => {
      if (resume) {
        const previous = await upload.findPreviousUploads()
        if (previous.length === 0) {
          throw new Error('no previous upload found to resume')
        }
        upload.resumeFromPreviousUpload(previous[0])
      }
      upload.start()
    }
    go().catch(reject)
  })
}

try {
  if (mode === 'resume') {
    const options = {
      chunkSize: 2 << 20,
      urlStorage: new tus.FileUrlStorage(store),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      retryDelays: [0, 500, 1000],
    }
    const first = await run({ input: fs.createReadStream(file), options, abortAfter: Math.floor(size / 2) + (1 << 20) })
    if (!first.aborted) {
      throw new Error('the upload finished before it could be aborted')
    }
    const second = await run({ input: fs.createReadStream(file), options, resume: true })
    if (second.url !== first.url) {
      throw new Error(`resumed ${second.url}, not the aborted ${first.url}`)
    }
    result.upload_url = second.url
  } else {
    const done = await run({ input: fs.readFileSync(file) })
    result.upload_url = done.url
  }
  console.log(JSON.stringify(result))
} catch (err) {
  console.error(`upload failed: ${err}`)
  process.exit(1)
}
