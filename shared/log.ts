/** One structured log line; never pass image bytes or API keys. */
export type Logger = (entry: Record<string, unknown>) => void

export const jsonLogger: Logger = (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }))
