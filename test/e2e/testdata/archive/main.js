import { greet } from './lib/helper.js';
const data = open('./lib/data.txt');
export const options = { iterations: 2 };
export default function () { console.log(greet(data.trim()) + ' ' + __ENV.WHO); }
