export { n as rolloutNotice } from "./last-rollout.mjs";
