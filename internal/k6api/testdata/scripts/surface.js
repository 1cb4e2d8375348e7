// Each name of k6's packages that published xk6 extensions use, as the
// probe extension uses it (testdata/xk6probe/surface_*.go); the test
// compares the lines with what k6's documented behaviour gives.
import { surface } from 'k6/x/probe';

export default function () {
  for (const line of surface(undefined)) console.log(line);
}
