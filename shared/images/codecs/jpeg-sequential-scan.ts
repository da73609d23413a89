import {
  acSkipTable,
  BitReader,
  FAST_AC_BITS,
  LOOKUP_BITS,
  scanGeometry,
  SKIP_BITS,
  SKIP_END_OF_BLOCK,
  ZIGZAG,
  type HuffmanTable,
  type ScanParams,
} from './jpeg-entropy.ts'
import { outputBlock } from './jpeg-idct.ts'
import { ImageDecodeError } from './raster.ts'

/*
 * The scans that carry a DC code for every block: baseline scans, and the DC scans of a progressive image. Their
 * loops keep the bit reader's state in locals and top it up in line (a helper taking the state would put those
 * locals on the heap), so a short code costs one table lookup; a long code, rare, goes through BitReader.decode.
 */

const PEEK_MASK = (1 << LOOKUP_BITS) - 1
const SKIP_MASK = (1 << SKIP_BITS) - 1
const FAST_AC_MASK = (1 << FAST_AC_BITS) - 1
/** Bits in the buffer before each code: one the lookup tables resolve (up to 14 bits) and its value (up to 15). */
const READY = 25
const MAX_OVERRUN = 256

function corrupt(): never {
  throw new ImageDecodeError('the JPEG data is corrupt (coefficient out of range)')
}

function truncated(): never {
  throw new ImageDecodeError('the JPEG data is truncated or corrupt')
}

/** The blocks of one MCU, each with its component's tables and where it lands: block row = mcuRow·rowStep + rowOffset. */
interface McuSlots {
  count: number
  component: number[]
  dcTable: HuffmanTable[]
  acTable: (HuffmanTable | null)[]
  rowStep: number[]
  colStep: number[]
  rowOffset: number[]
  colOffset: number[]
}

function mcuSlots(scan: ScanParams): McuSlots {
  const single = scan.components.length === 1
  const slots: McuSlots = { count: 0, component: [], dcTable: [], acTable: [], rowStep: [], colStep: [], rowOffset: [], colOffset: [] }
  for (const [index, c] of scan.components.entries()) {
    // A scan of one component visits its blocks one by one (T.81 A.2.2).
    const v = single ? 1 : c.v
    const h = single ? 1 : c.h
    for (let y = 0; y < v; y++) {
      for (let x = 0; x < h; x++) {
        slots.component.push(index)
        slots.dcTable.push(c.dcTable!)
        slots.acTable.push(c.acTable)
        slots.rowStep.push(v)
        slots.colStep.push(h)
        slots.rowOffset.push(y)
        slots.colOffset.push(x)
        slots.count++
      }
    }
  }
  return slots
}

/**
 * A baseline scan decoded at 1/8: each block's DC term goes straight into its component's plane, and its AC codes are
 * skipped several at a time through acSkipTable, their values never read. Returns the position after the scan's data.
 */
export function decodeBaselineScanAtEighth(data: Uint8Array, start: number, scan: ScanParams): number {
  const slots = mcuSlots(scan)
  const { total, perLine } = scanGeometry(scan)
  const planes = scan.components.map((c) => c.plane)
  const planeWidths = scan.components.map((c) => c.planeWidth)
  const dcQuant = scan.components.map((c) => c.quant![0])
  const skipTables = slots.acTable.map((table) => acSkipTable(table!))
  const predictions = new Int32Array(scan.components.length)
  const reader = new BitReader(data, start)
  const length = data.length
  let pos = start
  let buffer = 0
  let count = 0
  let overrun = 0
  let untilRestart = scan.restartInterval > 0 ? scan.restartInterval : total

  for (let mcu = 0; mcu < total; mcu++) {
    if (untilRestart-- === 0) {
      reader.pos = pos
      reader.restart()
      pos = reader.pos
      buffer = count = overrun = 0
      predictions.fill(0)
      untilRestart = scan.restartInterval - 1
    }
    const mcuRow = (mcu / perLine) | 0
    const mcuCol = mcu - mcuRow * perLine
    for (let slot = 0; slot < slots.count; slot++) {
      const skip = skipTables[slot]
      for (let k = 0; k < 64; ) {
        if (count < READY) {
          do {
            let byte = 0
            if (pos >= length) overrun++
            else if ((byte = data[pos]) !== 0xff) pos++
            else if (data[pos + 1] === 0) pos += 2
            else {
              byte = 0
              overrun++
            }
            buffer = (buffer << 8) | byte
            count += 8
          } while (count < READY)
          if (overrun > MAX_OVERRUN) truncated()
        }
        if (k === 0) {
          const table = slots.dcTable[slot]
          let size = table.lookup[(buffer >>> (count - LOOKUP_BITS)) & PEEK_MASK]
          if (size !== 0) {
            count -= size >> 8
            size &= 255
          } else {
            reader.buffer = buffer
            reader.count = count
            reader.pos = pos
            reader.overrun = overrun
            size = reader.decode(table)
            reader.fill()
            ;({ buffer, count, pos, overrun } = reader)
          }
          const component = slots.component[slot]
          if (size !== 0) {
            if (size > 15) corrupt()
            count -= size
            let diff = (buffer >>> count) & ((1 << size) - 1)
            if (diff < 1 << (size - 1)) diff -= (1 << size) - 1
            predictions[component] += diff
          }
          const row = mcuRow * slots.rowStep[slot] + slots.rowOffset[slot]
          const col = mcuCol * slots.colStep[slot] + slots.colOffset[slot]
          // The DC term as a block's Int16 coefficient holds it, dequantized and level-shifted; the plane clamps.
          planes[component][row * planeWidths[component] + col] =
            ((((predictions[component] << 16) >> 16) * dcQuant[component] + 4) >> 3) + 128
          k = 1
          continue
        }
        const entry = skip[(buffer >>> (count - SKIP_BITS)) & SKIP_MASK]
        // Codes that reach the block's last position are taken one at a time below, which finds where the block ends.
        const next = k + ((entry >> 5) & 127)
        if (entry !== 0 && next < 64) {
          count -= entry & 31
          if (entry & SKIP_END_OF_BLOCK) break
          k = next
          continue
        }
        const table = slots.acTable[slot]!
        let rs = table.lookup[(buffer >>> (count - LOOKUP_BITS)) & PEEK_MASK]
        if (rs !== 0) {
          count -= rs >> 8
          rs &= 255
        } else {
          reader.buffer = buffer
          reader.count = count
          reader.pos = pos
          reader.overrun = overrun
          rs = reader.decode(table)
          reader.fill()
          ;({ buffer, count, pos, overrun } = reader)
        }
        const size = rs & 15
        if (size === 0) {
          if (rs >> 4 < 15) break
          k += 16
          continue
        }
        k += rs >> 4
        if (k > 63) corrupt()
        count -= size
        k++
      }
    }
  }
  return pos
}

/**
 * A baseline scan at 1/1, 1/2 or 1/4: each block's coefficients into a scratch block, then the scaled inverse DCT
 * into its component's plane. Returns the position after the scan's data.
 */
export function decodeBaselineScan(data: Uint8Array, start: number, scan: ScanParams, scale: number): number {
  const slots = mcuSlots(scan)
  const { total, perLine } = scanGeometry(scan)
  const components = scan.components
  const predictions = new Int32Array(components.length)
  // All zeros but for the terms of the current block, which are cleared once it is output.
  const coefs = new Int16Array(64)
  const written = new Uint8Array(64)
  let terms = 0
  const reader = new BitReader(data, start)
  const length = data.length
  let pos = start
  let buffer = 0
  let count = 0
  let overrun = 0
  let untilRestart = scan.restartInterval > 0 ? scan.restartInterval : total

  for (let mcu = 0; mcu < total; mcu++) {
    if (untilRestart-- === 0) {
      reader.pos = pos
      reader.restart()
      pos = reader.pos
      buffer = count = overrun = 0
      predictions.fill(0)
      untilRestart = scan.restartInterval - 1
    }
    const mcuRow = (mcu / perLine) | 0
    const mcuCol = mcu - mcuRow * perLine
    for (let slot = 0; slot < slots.count; slot++) {
      const acTable = slots.acTable[slot]!
      const fast = acTable.fastAc
      let k = 0
      while (k < 64) {
        if (count < READY) {
          do {
            let byte = 0
            if (pos >= length) overrun++
            else if ((byte = data[pos]) !== 0xff) pos++
            else if (data[pos + 1] === 0) pos += 2
            else {
              byte = 0
              overrun++
            }
            buffer = (buffer << 8) | byte
            count += 8
          } while (count < READY)
          if (overrun > MAX_OVERRUN) truncated()
        }
        if (k > 0) {
          const quick = fast[(buffer >>> (count - FAST_AC_BITS)) & FAST_AC_MASK]
          if (quick !== 0) {
            count -= quick & 15
            k += (quick >> 4) & 15
            if (k > 63) corrupt()
            coefs[(written[terms++] = ZIGZAG[k])] = quick >> 8
            k++
            continue
          }
        }
        const table = k === 0 ? slots.dcTable[slot] : acTable
        let rs = table.lookup[(buffer >>> (count - LOOKUP_BITS)) & PEEK_MASK]
        if (rs !== 0) {
          count -= rs >> 8
          rs &= 255
        } else {
          reader.buffer = buffer
          reader.count = count
          reader.pos = pos
          reader.overrun = overrun
          rs = reader.decode(table)
          reader.fill()
          ;({ buffer, count, pos, overrun } = reader)
        }
        // A DC code is the value's size alone; an AC code is a run of zeros and a size.
        const size = k === 0 ? rs : rs & 15
        let value = 0
        if (size !== 0) {
          if (size > 15) corrupt()
          count -= size
          value = (buffer >>> count) & ((1 << size) - 1)
          if (value < 1 << (size - 1)) value -= (1 << size) - 1
        }
        if (k === 0) {
          coefs[0] = predictions[slots.component[slot]] += value
          k = 1
          continue
        }
        if (size === 0) {
          if (rs >> 4 < 15) break
          k += 16
          continue
        }
        k += rs >> 4
        if (k > 63) corrupt()
        coefs[(written[terms++] = ZIGZAG[k])] = value
        k++
      }
      const c = components[slots.component[slot]]
      const row = mcuRow * slots.rowStep[slot] + slots.rowOffset[slot]
      const col = mcuCol * slots.colStep[slot] + slots.colOffset[slot]
      outputBlock(coefs, 0, c.quant!, scale, c.plane, c.planeWidth, row, col, terms > 0)
      while (terms > 0) coefs[written[--terms]] = 0
    }
  }
  return pos
}

/**
 * A progressive DC scan: the first pass decodes each block's DC term (shifted by the scan's point transform), a
 * refinement reads one more bit of it. Terms go to the component's coefficients, 64 a block, or one at 1/8.
 */
export function decodeProgressiveDcScan(data: Uint8Array, start: number, scan: ScanParams, scale: number): number {
  const slots = mcuSlots(scan)
  const { total, perLine } = scanGeometry(scan)
  const components = scan.components
  const stride = scale === 8 ? 1 : 64
  const shift = scan.approxLow
  const refinement = scan.approxHigh > 0
  const predictions = new Int32Array(components.length)
  const reader = new BitReader(data, start)
  const length = data.length
  let pos = start
  let buffer = 0
  let count = 0
  let overrun = 0
  let untilRestart = scan.restartInterval > 0 ? scan.restartInterval : total

  for (let mcu = 0; mcu < total; mcu++) {
    if (untilRestart-- === 0) {
      reader.pos = pos
      reader.restart()
      pos = reader.pos
      buffer = count = overrun = 0
      predictions.fill(0)
      untilRestart = scan.restartInterval - 1
    }
    const mcuRow = (mcu / perLine) | 0
    const mcuCol = mcu - mcuRow * perLine
    for (let slot = 0; slot < slots.count; slot++) {
      if (count < READY) {
        do {
          let byte = 0
          if (pos >= length) overrun++
          else if ((byte = data[pos]) !== 0xff) pos++
          else if (data[pos + 1] === 0) pos += 2
          else {
            byte = 0
            overrun++
          }
          buffer = (buffer << 8) | byte
          count += 8
        } while (count < READY)
        if (overrun > MAX_OVERRUN) truncated()
      }
      const component = slots.component[slot]
      const c = components[component]
      const row = mcuRow * slots.rowStep[slot] + slots.rowOffset[slot]
      const col = mcuCol * slots.colStep[slot] + slots.colOffset[slot]
      const at = (row * c.blocksPerLine + col) * stride
      if (refinement) {
        count--
        if ((buffer >>> count) & 1) c.coefficients[at] |= 1 << shift
        continue
      }
      const table = slots.dcTable[slot]
      let size = table.lookup[(buffer >>> (count - LOOKUP_BITS)) & PEEK_MASK]
      if (size !== 0) {
        count -= size >> 8
        size &= 255
      } else {
        reader.buffer = buffer
        reader.count = count
        reader.pos = pos
        reader.overrun = overrun
        size = reader.decode(table)
        reader.fill()
        ;({ buffer, count, pos, overrun } = reader)
      }
      if (size !== 0) {
        if (size > 15) corrupt()
        count -= size
        let diff = (buffer >>> count) & ((1 << size) - 1)
        if (diff < 1 << (size - 1)) diff -= (1 << size) - 1
        predictions[component] += diff
      }
      c.coefficients[at] = predictions[component] * (1 << shift)
    }
  }
  return pos
}
