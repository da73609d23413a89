/**
 * `npx tsx scripts/bench-reading.ts`: how long the local engine takes to read where the shopper is in one photo
 * (analyseShopper: the copies, the silhouette, the landmarks, the person-presence test), median of 31 runs after 5
 * warm-ups, on a sample shopper and two tuning scenes of the evaluation's generator (a brick wall, a dim room).
 */
import { analyseShopper, shopperPixels } from '../shared/engine/local/index.ts'
import { asInput, makeShopperPhoto } from '../tests/support/images.ts'
import { scene } from '../tests/support/scenes/index.ts'

const photos: [string, ReturnType<typeof shopperPixels>][] = [
  ['sample shopper 600x900', shopperPixels(asInput(makeShopperPhoto({ width: 600, height: 900, seed: 3 })))],
  ['photo 7 (brick wall)', shopperPixels(asInput(scene('photo', 7).shopper))],
  ['dim 9 (a lamp-lit room)', shopperPixels(asInput(scene('dim', 9).shopper))],
]
for (const [name, photo] of photos) {
  for (let i = 0; i < 5; i++) analyseShopper(photo)
  const times: number[] = []
  for (let i = 0; i < 31; i++) {
    const start = performance.now()
    const { body } = analyseShopper(photo)
    times.push(performance.now() - start)
    if (!body.found) throw new Error(`${name}: no person found`)
  }
  times.sort((a, b) => a - b)
  console.log(`${name} (${photo.width}x${photo.height}): median ${times[15].toFixed(1)} ms, min ${times[0].toFixed(1)} ms`)
}
