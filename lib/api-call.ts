// The scripts' JSON call to the payment API (`npm run demo`, `npm run rehearsal`): they read the answers'
// fields by name and check what they need as they go, as an integrator's script does; an answer that is not
// 2xx is an error that names the route, the status and the body.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function call<T = any>(method: string, url: string, body?: unknown, token?: string): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
