export const options = {
  duration: '1s',
  stages: [{ duration: '1s', target: 1 }],
};

export default function () {}
