'use strict';
const mysql = require('mysql2/promise');

(async () => {
  const [email, flag] = process.argv.slice(2);
  const db = await mysql.createConnection({ uri: process.env.DATABASE_URL, multipleStatements: true });
  const sql = `SELECT id, email, plan, status, last_login FROM users WHERE email = '${email}' LIMIT 1;`;
  const [rows] = await db.query(sql);
  const user = Array.isArray(rows[0]) ? rows[0][0] : rows[0];
  if (!user) { console.log('no such user'); process.exit(0); }
  console.log(`${user.email}  plan=${user.plan}  status=${user.status}  last_login=${user.last_login}`);
  if (flag === '--unlock') {
    await db.query(`UPDATE users SET status = 'active', failed_logins = 0 WHERE email = '${email}'`);
    console.log('unlocked');
  }
  await db.end();
})();
