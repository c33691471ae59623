'use strict';
const { Client } = require('pg');

(async () => {
  const i = process.argv.indexOf('--like');
  const like = i > 0 ? process.argv[i + 1] : '';
  const db = new Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  await db.query('SET default_transaction_read_only = on');
  const sizes = await db.query(
    `SELECT relname, n_live_tup, pg_size_pretty(pg_total_relation_size(relid)) AS size
       FROM pg_stat_user_tables
      WHERE relname ILIKE '%' || $1 || '%'
      ORDER BY pg_total_relation_size(relid) DESC
      LIMIT 10`, [like]);
  console.table(sizes.rows);
  const ext = await db.query("SELECT 1 FROM pg_extension WHERE extname = $1", ['pg_stat_statements']);
  if (ext.rowCount) {
    const slow = await db.query(
      'SELECT left(query, 80) AS query, calls, round(mean_exec_time::numeric, 1) AS ms FROM pg_stat_statements ORDER BY mean_exec_time DESC LIMIT $1', [5]);
    console.table(slow.rows);
  }
  await db.end();
})();
