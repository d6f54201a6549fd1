/** The pages' name for how a timestamp is written for people; emails write it the same way (platform/time.ts). */
export { formatTime } from '../../platform/time.js';
