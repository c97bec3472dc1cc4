// An API client in memory for controller tests on fake time: every request is recorded, and
// answered by the test's function (no socket, so nothing waits on anything but the fake clock).
import type { ApiClient } from '../../src/cluster/apiClient.js';

export interface RecordedRequest { method: string; path: string; body: any }

export function recordingApi(answer: (r: RecordedRequest) => { status: number; body?: unknown }): ApiClient & { requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const respond = (method: string, path: string, body?: string) => {
    const r = { method, path, body: body === undefined ? undefined : JSON.parse(body) };
    requests.push(r);
    const a = answer(r);
    return { status: a.status, body: typeof a.body === 'string' ? a.body : JSON.stringify(a.body ?? {}) };
  };
  return {
    server: 'https://recording.invalid',
    requests,
    request: async (method, path, o) => respond(method, path, o?.body),
    requestBytes: async (method, path, o) => {
      const r = respond(method, path, o?.body);
      return { status: r.status, body: Buffer.from(r.body) };
    },
    stream: () => Promise.reject(new Error('no watches here')),
  };
}
