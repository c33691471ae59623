#!/usr/bin/env node
const [cmd, ...rest] = process.argv.slice(2);
console.log(`pdf-toolkit: ${cmd || 'help'} ${rest.join(' ')}`);
