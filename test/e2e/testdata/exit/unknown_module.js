import nope from 'k6/does-not-exist';

export default function () {
  nope();
}
