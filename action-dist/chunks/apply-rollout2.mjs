export { r as rolloutNotice } from "./apply-rollout.mjs";
