export default (src) => (src.match(/\bvar [a-z]+_[a-z]+/g) || []).map((m) => 'snake_case var: ' + m);
