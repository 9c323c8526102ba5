// Types of the undici modules the client imports by path (dispatcher.ts): undici's index loads all
// of undici (fetch, WebSocket, caches, ...), several times what a run needs.

declare module "undici/lib/dispatcher/dispatcher.js" {
  import { Dispatcher } from "undici";
  export = Dispatcher;
}

declare module "undici/lib/dispatcher/pool.js" {
  import { Pool } from "undici";
  export = Pool;
}

declare module "undici/lib/dispatcher/proxy-agent.js" {
  import { ProxyAgent } from "undici";
  export = ProxyAgent;
}

/** The methods undici's index gives every dispatcher. */
declare module "undici/lib/api/index.js" {
  const api: Record<string, unknown>;
  export = api;
}
