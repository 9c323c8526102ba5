// Plain fetch to a service, the way any client would, and narrowing its replies in assertions.

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  body: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body, sent as is. */
  rawBody?: string | Uint8Array;
  /** A form, sent the way fetch sends one: multipart for FormData, form-encoded for URLSearchParams. */
  form?: FormData | URLSearchParams;
  /** The bearer key; null sends no Authorization header. */
  key?: string | null;
  headers?: Record<string, string>;
}

export class HttpClient {
  readonly baseUrl: string;
  /** The bearer key of every request that does not give its own. */
  key: string;

  constructor(baseUrl: string, key: string) {
    this.baseUrl = baseUrl;
    this.key = key;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.key : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | Uint8Array | FormData | URLSearchParams | undefined = options.rawBody ?? options.form;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body ?? null });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  get(path: string, options?: RequestOptions): Promise<Reply> {
    return this.request("GET", path, options);
  }

  post(path: string, body: unknown, options: RequestOptions = {}): Promise<Reply> {
    return this.request("POST", path, { ...options, body });
  }

  patch(path: string, body: unknown, options: RequestOptions = {}): Promise<Reply> {
    return this.request("PATCH", path, { ...options, body });
  }

  delete(path: string, options?: RequestOptions): Promise<Reply> {
    return this.request("DELETE", path, options);
  }
}

/** Narrows a reply body to an object for property access in assertions. */
export function obj(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Error(`expected a JSON object, got ${JSON.stringify(body)}`);
  }
  return body as Record<string, unknown>;
}

export function list(body: unknown): Record<string, unknown>[] {
  if (!Array.isArray(body)) throw new Error(`expected a JSON array, got ${JSON.stringify(body)}`);
  return body as Record<string, unknown>[];
}

export interface PageBody {
  count: number;
  next: string | null;
  previous: string | null;
  results: Record<string, unknown>[];
}

export function page(body: unknown): PageBody {
  const value = obj(body);
  return value as unknown as PageBody;
}

export function errorBody(type: string, code: string, detail: string, attr: string | null = null) {
  return { type, code, detail, attr };
}
