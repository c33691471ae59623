'use strict';
const express = require('express');
const { Pool } = require('pg');

const pool = new Pool();
const router = express.Router();
const STATUSES = new Set(['new', 'paid', 'shipped', 'cancelled']);

router.get('/', async (req, res) => {
  const status = String(req.query.status || 'new');
  const customer = Number.parseInt(req.query.customer, 10);
  const limit = Math.min(Number.parseInt(req.query.limit, 10) || 50, 200);
  if (!STATUSES.has(status)) return res.json([]);
  if (!Number.isInteger(customer)) return res.status(400).json({ error: 'customer must be an integer' });
  const { rows } = await pool.query(
    'SELECT id, status, total, created_at FROM orders WHERE status = $1 AND customer_id = $2 ORDER BY created_at DESC LIMIT $3',
    [status, customer, limit]
  );
  res.json(rows);
});

module.exports = router;
