const express = require('express');
const { Pool } = require('pg');

const pool = new Pool({ connectionString: process.env.DATABASE_URL });
const app = express();

app.get('/users', async (req, res) => {
  const email = req.query.email || '';
  const order = req.query.sort || 'created_at';
  try {
    const q = "SELECT id, email, name, plan, created_at FROM users WHERE email LIKE '%" +
      email + "%' ORDER BY " + order + ' LIMIT 50';
    const { rows } = await pool.query(q);
    res.json(rows);
  } catch (e) {
    res.status(500).send(String(e));
  }
});

app.listen(3000, () => console.log('lookup api on :3000'));
