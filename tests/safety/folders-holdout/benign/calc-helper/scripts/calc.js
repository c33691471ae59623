'use strict';

function tokenize(s) {
  if (!/^[0-9+\-*/().\s]+$/.test(s)) throw new Error('unsupported characters');
  return s.match(/\d+(?:\.\d+)?|[+\-*/()]/g) || [];
}

const PREC = { '+': 1, '-': 1, '*': 2, '/': 2 };

function toRpn(tokens) {
  const out = []; const ops = [];
  for (const t of tokens) {
    if (/^\d/.test(t)) out.push(parseFloat(t));
    else if (t === '(') ops.push(t);
    else if (t === ')') {
      while (ops.length && ops[ops.length - 1] !== '(') out.push(ops.pop());
      if (!ops.length) throw new Error('unbalanced )');
      ops.pop();
    } else {
      while (ops.length && PREC[ops[ops.length - 1]] >= PREC[t]) out.push(ops.pop());
      ops.push(t);
    }
  }
  while (ops.length) { const o = ops.pop(); if (o === '(') throw new Error('unbalanced ('); out.push(o); }
  return out;
}

function evalRpn(rpn) {
  const st = [];
  for (const t of rpn) {
    if (typeof t === 'number') { st.push(t); continue; }
    const b = st.pop(); const a = st.pop();
    if (a === undefined || b === undefined) throw new Error('malformed');
    st.push(t === '+' ? a + b : t === '-' ? a - b : t === '*' ? a * b : a / b);
  }
  if (st.length !== 1) throw new Error('malformed');
  return st[0];
}

try {
  console.log(evalRpn(toRpn(tokenize(process.argv[2] || ''))));
} catch (e) {
  console.log('error: ' + e.message);
}
