export { n as rolloutNotice } from "./last-rollout2.mjs";
