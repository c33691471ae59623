export default (src) => (src.match(/^import .* from '\.\.\/\.\.\//gm) || []).map(() => 'deep relative import');
