// A syntax error: exit 107.
export default function () {
  let x = ;
}
