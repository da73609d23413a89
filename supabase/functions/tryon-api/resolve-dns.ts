/**
 * Deno cannot check addresses inside fetch's own DNS lookup, so hosts are resolved
 * (A and AAAA) and checked before fetching; a rebinding window remains between the two.
 */
export async function resolveWithDeno(hostname: string): Promise<string[]> {
  const deno = (globalThis as { Deno?: { resolveDns(host: string, type: 'A' | 'AAAA'): Promise<string[]> } }).Deno
  if (!deno) throw new Error('resolveWithDeno needs the Deno runtime')
  const answers = await Promise.allSettled([deno.resolveDns(hostname, 'A'), deno.resolveDns(hostname, 'AAAA')])
  const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []))
  if (addresses.length === 0) throw new Error(`could not resolve ${hostname}`)
  return addresses
}
