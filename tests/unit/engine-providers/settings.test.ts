import { describe, expect, it } from 'vitest'
import { readSettings } from '../../../shared/config.ts'
import { makeServiceAccount } from '../../support/provider-fakes.ts'

describe('engine configuration', () => {
  it('defaults to the local engine and the local train scorer, needing no credentials', () => {
    expect(readSettings({}).providers).toEqual({ engines: ['local'], trainScorer: 'local' })
  })

  it('picks a train judge that can see by default: Gemini with a Gemini key, else Gemini on Vertex with a service account, else local', async () => {
    const account = await makeServiceAccount('https://oauth2.googleapis.com/token')
    const vertexAccount = { VERTEX_PROJECT: 'my-project', VERTEX_SERVICE_ACCOUNT_JSON: account.json }
    expect(readSettings({ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k', GEMINI_API_KEY: 'AIza' }).providers).toMatchObject({
      trainScorer: 'gemini',
      gemini: { model: 'gemini-3.1-flash-image', scorerModel: 'gemini-3.5-flash' },
    })
    expect(
      readSettings({ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k', GEMINI_API_KEY: 'AIza', ...vertexAccount }).providers.trainScorer,
    ).toBe('gemini')
    const onVertex = readSettings({ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k', ...vertexAccount }).providers
    expect(onVertex).toMatchObject({
      trainScorer: 'vertex',
      vertex: {
        project: 'my-project',
        location: 'us-central1',
        geminiLocation: 'global',
        scorerModel: 'gemini-3.5-flash',
        serviceAccount: { client_email: account.clientEmail },
      },
    })
    expect(readSettings({ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k' }).providers.trainScorer).toBe('local')
    expect(
      readSettings({ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k', GEMINI_API_KEY: 'AIza', TRYON_TRAIN_SCORER: 'local' }).providers
        .trainScorer,
    ).toBe('local')
  })

  it('reads a fallback chain with each provider’s credentials, defaults and base URLs', () => {
    const { providers } = readSettings({
      TRYON_ENGINE: 'fashn, gemini',
      FASHN_API_KEY: 'fa-key',
      GEMINI_API_KEY: 'AIza-key',
      GEMINI_BASE_URL: 'http://127.0.0.1:9999',
    })
    expect(providers).toEqual({
      engines: ['fashn', 'gemini'],
      trainScorer: 'gemini',
      fashn: { apiKey: 'fa-key', baseUrl: 'https://api.fashn.ai', model: 'tryon-v1.6' },
      gemini: { apiKey: 'AIza-key', baseUrl: 'http://127.0.0.1:9999', model: 'gemini-3.1-flash-image', scorerModel: 'gemini-3.5-flash' },
    })
  })

  it('reads Vertex with a service-account key file', async () => {
    const account = await makeServiceAccount('https://oauth2.googleapis.com/token')
    const env = { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'my-project', VERTEX_SERVICE_ACCOUNT_JSON: account.json }
    const { providers } = readSettings(env, Date.parse('2026-11-25T12:00:00Z'))
    expect(providers.vertex).toMatchObject({
      project: 'my-project',
      location: 'us-central1',
      geminiLocation: 'global',
      model: 'virtual-try-on-001',
      scorerModel: 'gemini-3.5-flash',
      serviceAccount: { client_email: account.clientEmail, token_uri: 'https://oauth2.googleapis.com/token' },
    })
  })

  it('keeps virtual-try-on-001 as the Vertex default until its shutdown day, then its successor; a model set by hand stays', () => {
    const env = { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'my-project', VERTEX_ACCESS_TOKEN: 'ya29.t' }
    expect(readSettings(env, Date.parse('2027-01-19T23:59:59Z')).providers.vertex?.model).toBe('virtual-try-on-001')
    expect(readSettings(env, Date.parse('2027-01-20T00:00:00Z')).providers.vertex?.model).toBe('gemini-3.1-flash-image')
    const pinned = { ...env, VERTEX_MODEL: 'virtual-try-on-001' }
    expect(readSettings(pinned, Date.parse('2027-02-01T00:00:00Z')).providers.vertex?.model).toBe('virtual-try-on-001')
  })

  it('reads FASHN_MODEL (tryon-v1.6 by default, or tryon-max) and VERTEX_MODEL of either kind', () => {
    expect(readSettings({ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k' }).providers.fashn?.model).toBe('tryon-v1.6')
    expect(readSettings({ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k', FASHN_MODEL: 'tryon-max' }).providers.fashn?.model).toBe('tryon-max')
    const vertex = { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'my-project', VERTEX_ACCESS_TOKEN: 'ya29.t' }
    expect(
      readSettings({ ...vertex, VERTEX_MODEL: 'gemini-3.1-flash-image', VERTEX_GEMINI_LOCATION: 'us-central1' }).providers.vertex,
    ).toMatchObject({
      model: 'gemini-3.1-flash-image',
      geminiLocation: 'us-central1',
    })
  })

  it.each([
    [{ TRYON_ENGINE: 'fashn' }, /TRYON_ENGINE=fashn needs FASHN_API_KEY/],
    [{ TRYON_ENGINE: 'gemini' }, /TRYON_ENGINE=gemini needs GEMINI_API_KEY/],
    [{ TRYON_ENGINE: 'vertex', VERTEX_ACCESS_TOKEN: 't' }, /TRYON_ENGINE=vertex needs VERTEX_PROJECT/],
    [{ TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'my-project' }, /needs VERTEX_SERVICE_ACCOUNT_JSON .* or VERTEX_ACCESS_TOKEN/],
    [
      { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'my-project', VERTEX_SERVICE_ACCOUNT_JSON: '{"client_email": "x"' },
      /VERTEX_SERVICE_ACCOUNT_JSON is not valid JSON/,
    ],
    [
      { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'my-project', VERTEX_SERVICE_ACCOUNT_JSON: '{"client_email": "x@y"}' },
      /no PKCS#8 private_key/,
    ],
    [{ TRYON_TRAIN_SCORER: 'gemini' }, /TRYON_TRAIN_SCORER=gemini needs GEMINI_API_KEY/],
    [{ TRYON_TRAIN_SCORER: 'vertex' }, /TRYON_TRAIN_SCORER=vertex needs VERTEX_PROJECT/],
    [{ TRYON_ENGINE: 'replicate' }, /unknown engine "replicate"/],
    [{ TRYON_ENGINE: 'fashn,fashn', FASHN_API_KEY: 'k' }, /fashn is listed twice/],
    [{ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k', FASHN_BASE_URL: 'ftp://x' }, /FASHN_BASE_URL/],
    [{ TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'k', FASHN_MODEL: 'tryon-v1.5' }, /FASHN_MODEL/],
    [
      { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'my-project', VERTEX_ACCESS_TOKEN: 't', VERTEX_MODEL: 'imagen-4.0-generate-001' },
      /VERTEX_MODEL: "imagen-4.0-generate-001" is neither a Virtual Try-On model .* nor a Gemini image model/,
    ],
  ])('fails at startup with a clear message for %j', (env, message) => {
    expect(() => readSettings(env)).toThrow(message)
  })
})
