// exec.instance in the init context is an error in k6 (107).
import exec from 'k6/execution';

const n = exec.instance.vusInitialized;

export default function () {}
