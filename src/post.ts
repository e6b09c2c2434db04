import { postStep } from './action/post.js';

await postStep();
