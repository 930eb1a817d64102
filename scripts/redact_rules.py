#!/usr/bin/env python3
"""Makes redact-rules.json, the secret patterns `scrollback export --redact` applies, from gitleaks'
default rule set (config/gitleaks.toml, MIT licence, Copyright (c) 2019 Zachary Rice), plus two
rules from elsewhere that gitleaks has no general form of, and scrollback's own (`OWN`):

- `url-password`: detect-secrets' BasicAuthDetector (Yelp, Apache-2.0): the password of a URL's
  `user:password@`, with every character RFC 3986 allows there, and an empty user;
- `authorization-header`: the header part of gitleaks' own `curl-auth-header` rule
  (`Authorization: Bearer|Basic|Token …`), without its `curl` context, so that a header pasted
  anywhere is taken too.

    python3 scripts/redact_rules.py GITLEAKS_TOML VERSION > crates/render/redact-rules.json

A secret gitleaks ends at a quote, a space, `;` or a line end may end at `.`, `,`, `)`, `]`, `}`
or `>` too. Each rule keeps gitleaks' id, regex, secret group, entropy, keywords and the allowlists that look
at the secret, the match or the line (stop words included); path allowlists do not apply to a
transcript and are left out.
"""

import json
import sys
import tomllib

# The rules taken: the providers whose keys show up in coding agents' transcripts, and the generic
# forms (private keys, JWTs, `.env`-style assignments).
TAKEN = [
    "anthropic-api-key", "anthropic-admin-api-key", "openai-api-key", "perplexity-api-key",
    "huggingface-access-token", "aws-access-token", "gcp-api-key", "azure-ad-client-secret",
    "github-pat", "github-fine-grained-pat", "github-oauth", "github-app-token", "github-refresh-token",
    "gitlab-pat", "slack-bot-token", "slack-user-token", "slack-app-token", "slack-webhook-url",
    "stripe-access-token", "sendgrid-api-token", "twilio-api-key", "npm-access-token", "pypi-upload-token",
    "digitalocean-pat", "heroku-api-key-v2", "linear-api-key", "shopify-access-token", "databricks-api-token",
    "doppler-api-token", "telegram-bot-api-token", "mailgun-private-api-token", "postman-api-token",
    "private-key", "jwt", "generic-api-key", "age-secret-key", "atlassian-api-token", "curl-auth-user",
]

# What a rule that ends a secret at a space or the text's end (curl-auth-user) also ends it at: a
# sentence's end, a list, a call's argument, a quote, an escaped line end.
SPACE_END = r"(?:\s|\z)"
WIDER_SPACE_END = r"""(?:[\s"'\x60,;)\]}>]|\\[nr]|\z)"""

# A placeholder where a password would go is no password: `$PASS`, `${DB_PASSWORD}`, `<password>`,
# `{{ secret }}`, `***`, `xxx`, `changeme`.
PLACEHOLDER = {"regexes": [r"""(?i)^['"]?(?:\$\{?\w+\}?|\$\(\w+\)|<[^>]*>|\{\{[^}]*\}\}|\*+|x+|\.{3}|…|changeme|change-me|password|your[_-]?\w*)['"]?$"""]}

# Forms a coding agent's transcript holds that gitleaks has no rule of (scrollback's own, each with
# what it takes): a secret on a command line, in a URL's query, in an Azure connection string, a
# Docker Hub token, and a quoted password of any entropy.
OWN = [
    {"id": "azure-storage-key", "regex": r"(?i)AccountKey=([A-Za-z0-9+/]{40,}={0,2})",
     "keywords": ["accountkey="], "from": "scrollback: an Azure Storage connection string's AccountKey"},
    {"id": "docker-pat", "regex": r"\b(dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,})", "keywords": ["dckr_"],
     "from": "scrollback: a Docker Hub personal or organisation access token"},
    {"id": "command-line-password",
     "regex": r"""(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p|\bsshpass\s+(?:-\w+\s+)*-p\s*|\bdocker\s+login\b[^\n]*?\s-p\s+|\s--password(?:=|\s+))('[^'\n]+'|"[^"\n]+"|\\"[^"\\\n]+\\"|[^\s'"\\-][^\s'"\\]*)""",
     "keywords": ["-p", "--password"], "allowlists": [PLACEHOLDER],
     "from": "scrollback: a password given on a command line (mysql -pPW, sshpass -p, docker login -p, --password)"},
    {"id": "url-token",
     "regex": r"""(?i)[?&](?:access_token|auth_token|token|api_key|apikey|key|secret|client_secret|password|sig|signature)=([^&#\s"'<>\\]{8,})""",
     "keywords": ["token=", "key=", "secret=", "password=", "sig=", "signature="], "allowlists": [PLACEHOLDER],
     "from": "scrollback: a token in a URL's query"},
    {"id": "aws-secret-key",
     "regex": r"""(?i)aws_?secret_?(?:access_?)?key['"\\]{0,2}[ \t]{0,3}(?:=|:|[ \t])[ \t]{0,3}['"\\]{0,2}([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)""",
     "keywords": ["secret"], "from": "scrollback: an AWS secret access key after its name, on a command line too"},
    {"id": "password-value",
     "regex": r"""(?i)(?:passw(?:or)?d|pwd|passphrase)\w*\\?["']?[ \t]{0,3}(?:=|:|=>)[ \t]{0,3}\\?["']([^"'\\\n]{4,200})\\?["']""",
     "keywords": ["passw", "pwd", "passphrase"], "allowlists": [PLACEHOLDER],
     "from": "scrollback: a quoted password of any entropy (correct-horse-battery-staple)"},
]

# A URL's user and password: RFC 3986's userinfo, whose sub-delimiters (`!$&'()*+,;=`) detect-secrets
# leaves out; the user may be empty (`redis://:password@host`). Never a quote, a bracket or a space.
URL_USER = "[^:/?#\\[\\]@\\s\"<>\\x60]*"
URL_PASSWORD = "[^/?#\\[\\]@\\s\"<>\\x60]+"

# gitleaks ends many secrets at a quote, a space, `;` or a line end; one followed by `.`, `,`, `)`,
# `]`, `}` or `>` (a sentence's end, a list, a call's argument) is as much a secret.
END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
WIDER_END = r"""(?:[\x60'"\s;.,)\]}>]|\\[nr]|$)"""


def main():
    path, version = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        config = tomllib.load(f)
    by_id = {r["id"]: r for r in config["rules"]}
    rules = []
    for rule_id in TAKEN:
        r = by_id[rule_id]
        allow = []
        for a in r.get("allowlists", []):
            if a.get("paths"):
                continue
            allow.append({k: a[k] for k in ("regexTarget", "regexes", "stopwords", "condition") if k in a})
        rules.append({k: v for k, v in {
            "id": r["id"], "regex": r["regex"].replace(END, WIDER_END).replace(SPACE_END, WIDER_SPACE_END), "secretGroup": r.get("secretGroup"), "entropy": r.get("entropy"),
            "keywords": r.get("keywords", []), "allowlists": allow, "from": f"gitleaks {version}",
        }.items() if v not in (None, [])})
    curl = by_id["curl-auth-header"]["regex"]
    header = curl[curl.index('"(?i)') + 1:curl.index('"|\'')]
    rules.append({"id": "authorization-header", "regex": header, "entropy": 2.75,
                  "keywords": ["authorization", "key", "token"],
                  "from": f"gitleaks {version} (curl-auth-header, the header alone)"})
    rules.append({"id": "url-password", "regex": f"://{URL_USER}:({URL_PASSWORD})@",
                  "keywords": ["://"],
                  "from": "detect-secrets 1.5 (BasicAuthDetector, Apache-2.0), with RFC 3986's userinfo"})
    rules.extend(OWN)
    json.dump({
        "source": f"gitleaks {version} config/gitleaks.toml (MIT licence, Copyright (c) 2019 Zachary Rice), "
                  "and detect-secrets' BasicAuthDetector (Apache-2.0, Copyright (c) 2018 Yelp, Inc.)",
        "licence": "gitleaks: MIT (https://github.com/gitleaks/gitleaks/blob/master/LICENSE); "
                   "detect-secrets: Apache-2.0 (https://github.com/Yelp/detect-secrets/blob/master/LICENSE)",
        "rules": rules,
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
