/** CRC-32 (ISO-HDLC, reflected polynomial 0xEDB88320), as PNG chunks and our API key checksums use it. */
const TABLE = (() => {
  const table = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c
  }
  return table
})()

/** The CRC-32 of `bytes[start, end)`, as an unsigned 32-bit number. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = -1
  for (let i = start; i < end; i++) c = TABLE[(c ^ bytes[i]) & 255] ^ (c >>> 8)
  return (c ^ -1) >>> 0
}
