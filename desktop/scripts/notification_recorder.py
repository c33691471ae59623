"""A notification server for tests: owns org.freedesktop.Notifications on the session bus and
appends each notification it is sent to a file, one JSON object a line:
{"app_name": …, "summary": …, "body": …}.

Usage: /usr/bin/python3 notification_recorder.py OUT.jsonl   (DBUS_SESSION_BUS_ADDRESS set).
Needs Debian's python3-dbus and python3-gi (the system python3: they are not on PyPI's path).
Runs until killed. Implements what the Desktop Notifications spec asks of a server: Notify,
CloseNotification, GetCapabilities and GetServerInformation, and the NotificationClosed signal.
"""

import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
CLOSED_BY_CALL = 3  # the spec's reason: closed by a call to CloseNotification


class Recorder(dbus.service.Object):
    def __init__(self, bus, out_path):
        super().__init__(bus, OBJECT_PATH)
        self.out_path = out_path
        self.last_id = 0

    @dbus.service.method(BUS_NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, timeout):
        note = {"app_name": str(app_name), "summary": str(summary), "body": str(body)}
        with open(self.out_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(note) + "\n")
        if replaces_id:
            return replaces_id
        self.last_id += 1
        return self.last_id

    @dbus.service.method(BUS_NAME, in_signature="u", out_signature="")
    def CloseNotification(self, notification_id):
        self.NotificationClosed(notification_id, CLOSED_BY_CALL)

    @dbus.service.method(BUS_NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body"]

    @dbus.service.method(BUS_NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("lull-notification-recorder", "Lull", "1", "1.2")

    @dbus.service.signal(BUS_NAME, signature="uu")
    def NotificationClosed(self, notification_id, reason):
        pass


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: notification_recorder.py OUT.jsonl", file=sys.stderr)
        return 2
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    recorder = Recorder(bus, sys.argv[1])
    # Owned only once the object is served, so a caller that sees the name can use it.
    name = dbus.service.BusName(BUS_NAME, bus, do_not_queue=True)
    GLib.MainLoop().run()
    del name, recorder
    return 0


if __name__ == "__main__":
    sys.exit(main())
