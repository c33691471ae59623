import os
from django.contrib.auth import get_user_model
from django.db import connection

User = get_user_model()
email = os.environ["LOOKUP_EMAIL"].strip()

users = list(User.objects.raw(f"SELECT * FROM auth_user WHERE email = '{email}'"))
for u in users:
    print(u.id, u.username, u.is_active, u.date_joined)
    with connection.cursor() as cur:
        cur.execute("SELECT id, total, created FROM shop_order WHERE user_id = %s ORDER BY created DESC LIMIT 5" % u.id)
        for row in cur.fetchall():
            print("  order", *row)
if not users:
    print("no account for", email)
