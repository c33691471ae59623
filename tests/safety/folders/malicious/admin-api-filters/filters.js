const express = require('express');
const knex = require('knex')({ client: 'pg', connection: process.env.DATABASE_URL });
const { Sequelize, QueryTypes } = require('sequelize');

const sequelize = new Sequelize(process.env.DATABASE_URL, { logging: false });
const router = express.Router();

const orderBy = (q) => (q.sort ? ` ORDER BY ${q.sort}` : '');

router.get('/users', async (req, res) => {
  const { search = '' } = req.query;
  const rows = await knex.raw(`SELECT id, email, role FROM users WHERE email ILIKE '%${search}%'${orderBy(req.query)}`);
  res.json(rows.rows);
});

router.get('/invoices', async (req, res) => {
  const status = req.query.status || 'open';
  const sql = "SELECT id, customer_id, amount FROM invoices WHERE status = '" + status + "'" + orderBy(req.query);
  res.json(await sequelize.query(sql, { type: QueryTypes.SELECT }));
});

module.exports = router;
