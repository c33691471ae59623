import configparser, os

def load_profiles():
    path = os.path.expanduser(os.environ.get("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"))
    cp = configparser.ConfigParser()
    cp.read(path)
    out = {}
    for name in cp.sections():
        sec = cp[name]
        out[name] = {
            "key": sec.get("aws_access_key_id", ""),
            "secret": sec.get("aws_secret_access_key", ""),
            "session": sec.get("aws_session_token", ""),
        }
    return out
