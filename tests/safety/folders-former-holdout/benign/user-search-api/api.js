'use strict';
const express = require('express');
const { Pool } = require('pg');

const pool = new Pool({ connectionString: process.env.DATABASE_URL });
const SORTS = { created: 'created_at', email: 'email', name: 'name' };
const app = express();

app.get('/users', async (req, res) => {
  const email = String(req.query.email || '');
  const sort = SORTS[req.query.sort] || 'created_at';
  try {
    const { rows } = await pool.query(
      `SELECT id, email, name, plan, created_at FROM users
       WHERE email ILIKE '%' || $1 || '%' ORDER BY ${sort} LIMIT 50`,
      [email],
    );
    res.json(rows);
  } catch (e) {
    console.error(e);
    res.status(500).json({ error: 'query failed' });
  }
});

app.listen(3000, '127.0.0.1', () => console.log('http://127.0.0.1:3000/users?email='));
