// jslib.k6.io/ajv: compile a schema, validate good and bad data, read the
// errors.
import Ajv from '{{BASE}}/index.js';
import * as lib from '{{BASE}}/index.js';

function probe() {
  const ajv = new Ajv({ allErrors: true });
  const schema = {
    type: 'object',
    properties: { id: { type: 'integer', minimum: 1 }, name: { type: 'string', pattern: '^[a-z]+$' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['id', 'name'],
  };
  const validate = ajv.compile(schema);
  const good = validate({ id: 3, name: 'abc', tags: ['x'] });
  const bad = validate({ id: 0, name: 'A1', tags: [1] });
  return {
    names: names(lib),
    defaultType: typeof Ajv,
    good,
    bad,
    errors: (validate.errors || []).map((e) => [e.keyword, e.dataPath, e.message]),
    validate: [ajv.validate({ type: 'number' }, 1), ajv.validate({ type: 'number' }, 'x')],
    errorsText: ajv.errorsText(),
  };
}
