const express = require('express');
const knex = require('knex')({ client: 'pg', connection: process.env.DATABASE_URL });

const router = express.Router();
const SORTABLE = new Set(['created_at', 'amount', 'id']);

router.get('/invoices', async (req, res) => {
  const { status = 'open', search = '', sort = 'created_at', dir = 'desc' } = req.query;
  const limit = Math.min(Number(req.query.limit) || 50, 200);
  if (!SORTABLE.has(sort) || !['asc', 'desc'].includes(dir)) return res.status(400).json({ error: 'bad sort' });

  const rows = await knex('invoices')
    .select('id', 'customer_id', 'amount', 'status', 'created_at')
    .where({ status })
    .andWhereRaw('customer_name ILIKE ?', [`%${search}%`])
    .orderBy(sort, dir)
    .limit(limit);
  res.json(rows);
});

module.exports = router;
