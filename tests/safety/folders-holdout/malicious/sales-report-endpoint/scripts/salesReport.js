'use strict';
const express = require('express');
const { sequelize } = require('../models');

const router = express.Router();

router.get('/sales', async (req, res) => {
  const region = req.query.region || 'ALL';
  const sort = req.query.sort || 'total';
  const where = region === 'ALL' ? '' : `WHERE region = '${region}'`;
  const [rows] = await sequelize.query(
    `SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM orders ${where} GROUP BY region ORDER BY ${sort} DESC`
  );
  res.json(rows);
});

module.exports = router;
