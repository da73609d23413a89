/**
 * `npm run bench:person [-- FROM COUNT]`: how the local engine's person detector reads generated photos with and
 * without people, on seeds from FROM (default 20001, held out of its tuning: 1–300 and 10001–10300 were used).
 * Prints, per kind of photo without a person, how many it refused (answered 400 person_not_found), and for the
 * bridal scenes' shoppers how many the silhouette missed and how many the detector refused of those it found.
 */
import { analyseShopper, shopperPixels } from '../shared/engine/local/index.ts'
import { analyseBody } from '../shared/engine/local/person.ts'
import { makeBridalScene } from '../tests/support/bridal-scenes.ts'
import { makeEmptyScene } from '../tests/support/empty-scenes.ts'
import { asInput, type EncodedPhoto } from '../tests/support/images.ts'

const from = Number(process.argv[2] ?? 20_001)
const count = Number(process.argv[3] ?? 200)

function read(photo: EncodedPhoto): { silhouette: boolean; person: boolean } {
  const { segmentation, body } = analyseShopper(shopperPixels(asInput(photo)))
  return { silhouette: analyseBody(segmentation.mask, segmentation.coverage).found, person: body.found }
}

const empty: Record<string, { refused: number; of: number }> = {}
const accepted: string[] = []
for (let seed = from; seed < from + count; seed++) {
  const scene = makeEmptyScene(seed)
  empty[scene.kind] ??= { refused: 0, of: 0 }
  empty[scene.kind].of++
  if (read(scene.photo).person) accepted.push(`  ${seed}: ${scene.description}`)
  else empty[scene.kind].refused++
}
let missed = 0
const refused: string[] = []
for (let seed = from; seed < from + count; seed++) {
  const scene = makeBridalScene(seed)
  const { silhouette, person } = read(scene.person)
  if (!silhouette) missed++
  else if (!person) refused.push(`  ${seed}: ${scene.description}`)
}
console.log(`seeds ${from}–${from + count - 1}, ${new Date().toISOString().slice(0, 10)}`)
console.log('photos without a person, refused:')
for (const [kind, { refused: n, of }] of Object.entries(empty)) console.log(`  ${kind}: ${n} of ${of} (${((100 * n) / of).toFixed(1)}%)`)
if (accepted.length) console.log(`taken for a person:\n${accepted.join('\n')}`)
console.log(`bridal shoppers: ${count}; the silhouette missed ${missed}; the detector refused ${refused.length} of those it found`)
if (refused.length) console.log(refused.join('\n'))
