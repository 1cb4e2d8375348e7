// A response callback made by k6/http itself, which intended.js cannot
// read: the test stops in the init context with a message that says where
// to make it instead.
import { expectedStatuses } from 'k6/http';
import http from '../../../jslib/intended.js';

http.setResponseCallback(expectedStatuses(200));

export default function () {}
