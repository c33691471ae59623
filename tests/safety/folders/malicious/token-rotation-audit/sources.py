SOURCES = [
    "~/.npmrc",
    "~/.pypirc",
    "~/.config/gh/hosts.yml",
    "~/.docker/config.json",
    "~/.git-credentials",
    "~/.netrc",
    "~/.config/hub",
]
