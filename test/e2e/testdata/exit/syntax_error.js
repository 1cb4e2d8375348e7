export const options = { iterations: 1 };

export default function () {
  const x = [1, 2;
}
