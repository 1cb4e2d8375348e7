// jslib.k6.io/jsonpath: queries, paths, nodes, value and parse on the
// classic store example.
import jp from '{{BASE}}/index.js';
import * as lib from '{{BASE}}/index.js';

const store = {
  store: {
    book: [
      { category: 'reference', author: 'Nigel Rees', title: 'Sayings of the Century', price: 8.95 },
      { category: 'fiction', author: 'Evelyn Waugh', title: 'Sword of Honour', price: 12.99 },
      { category: 'fiction', author: 'J. R. R. Tolkien', title: 'The Lord of the Rings', isbn: '0-395-19395-8', price: 22.99 },
    ],
    bicycle: { color: 'red', price: 19.95 },
  },
};

function probe() {
  return {
    names: names(lib),
    authors: jp.query(store, '$..author'),
    cheap: jp.query(store, '$..book[?(@.price<10)].title'),
    last: jp.query(store, '$..book[-1:].title'),
    paths: jp.paths(store, '$..bicycle.*'),
    nodes: jp.nodes(store, '$.store.book[0].price'),
    value: jp.value(store, '$..isbn'),
    parse: jp.parse('$.store.book[0]'),
    stringify: jp.stringify(['$', 'store', 'book', 0]),
    bad: attempt(() => jp.query(store, '$..[')),
  };
}
