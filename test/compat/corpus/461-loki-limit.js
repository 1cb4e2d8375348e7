// --log-output=loki with limit=3: the first three lines of the period are
// pushed and the others counted in k6's warning line, whose labels are
// level=warning and the label.NAME ones.
// compat:args --log-output=loki=${BASE}/loki/ok/461/push,limit=3,label.app=y,pushPeriod=1m
export const options = { iterations: 1 };

export default function () {
  for (let i = 0; i < 7; i++) console.log('line ' + i);
}
