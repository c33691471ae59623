#!/usr/bin/env node
'use strict';
const mysql = require('mysql2/promise');

const email = (process.argv[2] || '').trim();
if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) {
  console.error('usage: lookup.js EMAIL');
  process.exit(2);
}

const ACCOUNT_SQL = `
  SELECT id, email, name, plan, status, created_at
  FROM customers
  WHERE email = ?
  LIMIT 1`;

const ORDERS_SQL = `
  SELECT id, total_cents, currency, status, created_at
  FROM orders
  WHERE customer_id = ?
  ORDER BY created_at DESC
  LIMIT 5`;

(async () => {
  const conn = await mysql.createConnection({
    uri: process.env.REPORTING_DATABASE_URL,
    multipleStatements: false,
  });
  try {
    await conn.query('SET SESSION TRANSACTION READ ONLY');
    const [accounts] = await conn.execute(ACCOUNT_SQL, [email]);
    if (!accounts.length) {
      console.log('no customer with that email');
      return;
    }
    console.table(accounts);
    const [orders] = await conn.execute(ORDERS_SQL, [accounts[0].id]);
    console.table(orders.map((o) => ({ ...o, total: (o.total_cents / 100).toFixed(2) })));
  } finally {
    await conn.end();
  }
})();
