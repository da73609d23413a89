// The part of autocannon 8's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  export interface Options {
    url: string
    connections?: number
    duration?: number
    amount?: number
    timeout?: number
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    /** Called with each connection's client when it is created. */
    setupClient?: (client: Client) => void
  }

  export interface Client {
    setHeaders(headers: Record<string, string>): void
  }

  export interface Result {
    errors: number
    timeouts: number
    non2xx: number
    duration: number
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void
  }

  export default function autocannon(options: Options): Instance
}
