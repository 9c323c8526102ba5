export { t as rolloutNotice } from "./last-rollout.mjs";
