// --log-output=loki: console lines go to Loki in one push at the run's
// end, one stream per label set (level, source and label.NAME), the line
// the bare message, with header.NAME on the request, as in k6.
// compat:args --log-output=loki=${BASE}/loki/ok/460/push,label.app=x,header.X-Org=t1,pushPeriod=1m
export const options = { iterations: 1 };

export default function () {
  for (let i = 0; i < 5; i++) console.log('line ' + i);
  console.warn('warned');
  console.error('failed');
  console.debug('not sent without --verbose');
}
