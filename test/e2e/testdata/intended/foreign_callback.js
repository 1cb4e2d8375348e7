// A response callback made by k6/http itself, whose statuses intended.js
// cannot read: given to setResponseCallback in the init context (the
// default) the test stops there; given in a request's params
// (WHERE=params) the test is aborted at that request. Both messages say
// where to make the callback instead.
import { expectedStatuses } from 'k6/http';
import http, { intendedScenario, wrap } from '../../../../jslib/intended.js';

export const options = {
  scenarios: { api: intendedScenario({ rate: 10, duration: '1s', vus: 1 }) },
};

const foreign = expectedStatuses(200);

if (__ENV.WHERE !== 'params') {
  http.setResponseCallback(foreign);
}

export default wrap(function () {
  http.get(__ENV.TARGET, { responseCallback: foreign });
});
