// --log-output=loki with level=warning: info lines are not pushed.
// compat:args --log-output=loki=${BASE}/loki/ok/463/push,level=warning,label.app=x,pushPeriod=1m
export const options = { iterations: 1 };

export default function () {
  console.log('info is left out');
  console.warn('warned');
  console.error('failed');
}
