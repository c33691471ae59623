"""Clicks inside an X11 window, as a person's mouse would (XTest), at a point in the window.

Usage: python3 x11_click.py 0xWINDOWID X Y [BUTTON [TIMES]]   (DISPLAY must be set; X, Y
relative to the window; BUTTON 1 by default, 4 and 5 turn the wheel up and down; TIMES 1).
Uses only libX11 and libXtst through ctypes, so the scripts need no xdotool.
"""

import ctypes
import sys


class XWindowAttributes(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("width", ctypes.c_int),
                ("height", ctypes.c_int), ("pad", ctypes.c_long * 32)]


def main() -> int:
    window_id, x, y = int(sys.argv[1], 16), int(sys.argv[2]), int(sys.argv[3])
    button = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    times = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    xlib = ctypes.cdll.LoadLibrary("libX11.so.6")
    xtst = ctypes.cdll.LoadLibrary("libXtst.so.6")
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XDefaultRootWindow.restype = ctypes.c_ulong
    xlib.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    xlib.XTranslateCoordinates.argtypes = [
        ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
        ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_ulong),
    ]
    xlib.XFlush.argtypes = [ctypes.c_void_p]
    xlib.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    xlib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_ulong]
    xtst.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]

    display = xlib.XOpenDisplay(None)
    if not display:
        print("x11_click.py: cannot open the X display (is DISPLAY set?)", file=sys.stderr)
        return 1
    root = xlib.XDefaultRootWindow(display)
    root_x, root_y, child = ctypes.c_int(), ctypes.c_int(), ctypes.c_ulong()
    xlib.XTranslateCoordinates(display, window_id, root, x, y,
                               ctypes.byref(root_x), ctypes.byref(root_y), ctypes.byref(child))
    xtst.XTestFakeMotionEvent(display, -1, root_x.value, root_y.value, 0)
    xlib.XSync(display, 0)
    for _ in range(times):
        xtst.XTestFakeButtonEvent(display, button, 1, 0)
        xtst.XTestFakeButtonEvent(display, button, 0, 0)
        xlib.XSync(display, 0)
    xlib.XFlush(display)
    xlib.XCloseDisplay(display)
    return 0


if __name__ == "__main__":
    sys.exit(main())
