// --log-output=loki with allowedLabels=[level]: other labels move to the
// end of the line as key=value, and msgMaxSize=10 keeps the first and last
// five characters of a longer line around "... omitting N characters ...".
// compat:args --log-output=loki=${BASE}/loki/ok/462/push,allowedLabels=[level],msgMaxSize=10,pushPeriod=1m
export const options = { iterations: 1 };

export default function () {
  console.log('line 0');
  console.warn('ünïcödé characters count as one');
}
