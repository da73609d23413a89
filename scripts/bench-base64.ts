import { decodeBase64, encodeBase64 } from '../shared/images/base64.ts'

const imageBytes = 8 * 1024 * 1024
const rounds = 20

function randomBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size)
  for (let offset = 0; offset < size; offset += 65_536) {
    crypto.getRandomValues(bytes.subarray(offset, Math.min(offset + 65_536, size)))
  }
  return bytes
}

function measure(label: string, run: () => unknown, megabytes: number): void {
  for (let i = 0; i < 3; i++) run()
  const started = performance.now()
  for (let i = 0; i < rounds; i++) run()
  const seconds = (performance.now() - started) / 1000
  console.log(`${label.padEnd(34)} ${((megabytes * rounds) / seconds).toFixed(0).padStart(6)} MB/s`)
}

const image = randomBytes(imageBytes)
const standard = encodeBase64(image)
const urlSafe = standard.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
const wrapped = standard.replace(/.{76}/g, '$&\r\n')
const megabytes = imageBytes / (1024 * 1024)

const decoded = decodeBase64(standard)
if (!decoded || decoded.length !== image.length || decoded.some((byte, i) => byte !== image[i])) {
  throw new Error('round trip failed')
}

console.log(`base64 of an ${megabytes} MB image (MB of decoded image per second)`)
measure('decode standard', () => decodeBase64(standard), megabytes)
measure('decode url-safe, unpadded', () => decodeBase64(urlSafe), megabytes)
measure('decode wrapped at 76 columns', () => decodeBase64(wrapped), megabytes)
measure('encode', () => encodeBase64(image), megabytes)
