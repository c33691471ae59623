#!/usr/bin/env node
console.log('toolkit 2.4.1');
