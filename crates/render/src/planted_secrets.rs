//! A planted set of secrets for the redaction tests: one or more made for every rule, each put in
//! every position a text may hold it (its start and end, before punctuation, inside a JSON string,
//! between lines), and ordinary text that holds no secret. Shared by the unit tests of `redact`
//! and the end-to-end ones (`tests/redact.rs`); plain `std`, made in code, nothing committed.

/// A planted secret.
pub struct Planted {
    /// The rule that should take it.
    pub rule: &'static str,
    /// Where it stands in `text`.
    pub position: &'static str,
    /// The text that holds it.
    pub text: String,
    /// The pieces of it that must not survive redaction.
    pub secret: Vec<String>,
}

/// A deterministic xorshift, so that every run plants the same secrets.
struct Rand(u64);

impl Rand {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n).map(|_| a[(self.next() % a.len() as u64) as usize] as char).collect()
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";
const WORD: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const DIGITS: &str = "0123456789";

/// Each rule's samples: the text that holds the secret (with the context the rule needs), and
/// the secret's pieces.
fn samples() -> Vec<(&'static str, String, Vec<String>)> {
    let mut r = Rand(0x5eed_cafe_f00d_d00d);
    let mut out: Vec<(&'static str, String, Vec<String>)> = Vec::new();
    let mut bare = |rule: &'static str, secret: String| out.push((rule, secret.clone(), vec![secret]));
    bare("anthropic-api-key", format!("sk-ant-api03-{}AA", r.pick(WORD, 93)));
    bare("anthropic-admin-api-key", format!("sk-ant-admin01-{}AA", r.pick(WORD, 93)));
    bare("openai-api-key", format!("sk-proj-{}T3BlbkFJ{}", r.pick(WORD, 74), r.pick(WORD, 74)));
    bare("openai-api-key", format!("sk-{}T3BlbkFJ{}", r.pick(ALNUM, 20), r.pick(ALNUM, 20)));
    bare("perplexity-api-key", format!("pplx-{}", r.pick(ALNUM, 48)));
    bare("huggingface-access-token", format!("hf_{}", r.pick(LETTERS, 34)));
    bare("aws-access-token", format!("AKIA{}", r.pick(BASE32, 16)));
    bare("gcp-api-key", format!("AIza{}", r.pick(WORD, 35)));
    bare("github-pat", format!("ghp_{}", r.pick(ALNUM, 36)));
    bare("github-fine-grained-pat", format!("github_pat_{}", r.pick(ALNUM, 82)));
    bare("github-oauth", format!("gho_{}", r.pick(ALNUM, 36)));
    bare("github-app-token", format!("ghs_{}", r.pick(ALNUM, 36)));
    bare("github-refresh-token", format!("ghr_{}", r.pick(ALNUM, 36)));
    bare("gitlab-pat", format!("glpat-{}", r.pick(ALNUM, 20)));
    bare("slack-bot-token", format!("xoxb-{}-{}-{}", r.pick(DIGITS, 12), r.pick(DIGITS, 13), r.pick(ALNUM, 24)));
    bare(
        "slack-user-token",
        format!("xoxp-{}-{}-{}-{}", r.pick(DIGITS, 12), r.pick(DIGITS, 12), r.pick(DIGITS, 12), r.pick(ALNUM, 32)),
    );
    bare(
        "slack-app-token",
        format!("xapp-1-A{}-{}-{}", r.pick("ABCDEFGHIJ0123456789", 10), r.pick(DIGITS, 13), r.pick(HEX, 64)),
    );
    bare("slack-webhook-url", format!("https://hooks.slack.com/services/{}", r.pick(ALNUM, 44)));
    bare("stripe-access-token", format!("sk_live_{}", r.pick(ALNUM, 24)));
    bare("stripe-access-token", format!("rk_test_{}", r.pick(ALNUM, 32)));
    bare("sendgrid-api-token", format!("SG.{}.{}", r.pick(ALNUM, 22), r.pick(ALNUM, 43)));
    bare("twilio-api-key", format!("SK{}", r.pick(HEX, 32)));
    bare("npm-access-token", format!("npm_{}", r.pick(ALNUM, 36)));
    bare("pypi-upload-token", format!("pypi-AgEIcHlwaS5vcmc{}", r.pick(WORD, 70)));
    bare("digitalocean-pat", format!("dop_v1_{}", r.pick(HEX, 64)));
    bare("heroku-api-key-v2", format!("HRKU-AA{}", r.pick(WORD, 58)));
    bare("linear-api-key", format!("lin_api_{}", r.pick(ALNUM, 40)));
    bare("shopify-access-token", format!("shpat_{}", r.pick(HEX, 32)));
    bare("databricks-api-token", format!("dapi{}", r.pick(HEX, 32)));
    bare("doppler-api-token", format!("dp.pt.{}", r.pick(ALNUM, 43)));
    bare("postman-api-token", format!("PMAK-{}-{}", r.pick(HEX, 24), r.pick(HEX, 34)));
    bare("jwt", format!("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{}.{}", r.pick(ALNUM, 40), r.pick(WORD, 43)));
    bare("azure-ad-client-secret", format!("{}8Q~{}", r.pick(ALNUM, 3), r.pick(ALNUM, 32)));
    bare("docker-pat", format!("dckr_pat_{}", r.pick(WORD, 27)));
    bare("atlassian-api-token", format!("ATATT3{}", r.pick(WORD, 186)));
    bare("age-secret-key", format!("AGE-SECRET-KEY-1{}", r.pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)));
    // Rules that need their context: the secret is the value after it.
    let mut context = |rule: &'static str, before: &str, secret: String, after: &str| {
        out.push((rule, format!("{before}{secret}{after}"), vec![secret]))
    };
    context(
        "telegram-bot-api-token",
        "TELEGRAM_BOT_TOKEN=",
        format!("{}:A{}", r.pick(DIGITS, 10), r.pick(WORD, 34)),
        "",
    );
    context("mailgun-private-api-token", "mailgun_api_key: ", format!("key-{}", r.pick(HEX, 32)), "");
    context("generic-api-key", "api_key = ", r.pick(ALNUM, 32), "");
    context("generic-api-key", "export DB_PASSWORD=", r.pick(ALNUM, 24), "");
    context("authorization-header", "Authorization: Bearer ", r.pick(WORD, 40), "");
    context("authorization-header", "X-Api-Key: ", r.pick(ALNUM, 32), "");
    for (before, password, after) in [
        ("postgres://admin:", "Pw!$*+=;,&()'x9", "@db.internal:5432/app"),
        ("redis://:", "hunter2-redis", "@cache:6379/0"),
        ("https://deploy:", "p(a)ss;w,o=r*d", "@git.example.com/repo.git"),
        ("mongodb+srv://svc:", "s3cr&t+v'alue", "@cluster0.example.net/"),
        ("amqp://guest:", "gu3st!pass$", "@rabbit:5672"),
    ] {
        context("url-password", before, password.to_owned(), after);
    }
    context(
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=",
        format!("{}==", r.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 86)),
        ";EndpointSuffix=core.windows.net",
    );
    context("curl-auth-user", "curl -u admin:", r.pick(ALNUM, 12), " https://ci.example.com/api/json");
    context("command-line-password", "mysql -u root -p", r.pick(ALNUM, 14), " app_production");
    context("command-line-password", "sshpass -p '", r.pick(ALNUM, 12), "' ssh deploy@db.internal");
    context("command-line-password", "docker login -u deployer -p ", r.pick(ALNUM, 16), " registry.example.com");
    context("url-token", "https://api.example.com/v1/items?access_token=", r.pick(WORD, 32), "&page=2");
    context("password-value", "POSTGRES_PASSWORD=\"", format!("{}!#{}", r.pick(ALNUM, 8), r.pick(ALNUM, 4)), "\"");
    context("password-value", "\"password\": \"", "correct-horse-battery-staple".to_owned(), "\"");
    context("aws-secret-key", "aws configure set aws_secret_access_key ", r.pick(ALNUM, 38) + "/+", "");
    let body: Vec<String> =
        (0..5).map(|_| r.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 64)).collect();
    let key = format!("-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----", body.join("\n"));
    out.push(("private-key", key, body));
    out
}

/// `s` as it stands inside a JSON string.
fn json_escaped(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Every sample in every position.
pub fn planted() -> Vec<Planted> {
    let mut out = Vec::new();
    for (rule, s, secret) in samples() {
        let positions = [
            ("at the start", format!("{s} is what the command printed")),
            ("at the end", format!("The value it printed is {s}")),
            ("alone", s.clone()),
            ("before a full stop", format!("It was {s}. Then we moved on.")),
            ("before a comma", format!("Keys: {s}, and the rest")),
            ("before a parenthesis", format!("connect({s})")),
            ("inside a JSON string", format!("{{\"value\": \"{}\", \"n\": 1}}", json_escaped(&s))),
            ("between lines", format!("first line\n{s}\nlast line")),
        ];
        for (position, text) in positions {
            out.push(Planted { rule, position, text, secret: secret.clone() });
        }
    }
    out
}

/// Ordinary text that holds no secret, and must come through redaction unchanged.
pub fn ordinary() -> Vec<&'static str> {
    vec![
        "Run cargo test, then open src/db.rs and fix the row_count parsing.",
        "The key is in the drawer, and the password field was empty.",
        "See https://example.com:8080/docs/index.html#install for the steps.",
        "Clone git@github.com:example/project.git or ssh://git@github.com/example/project.git",
        "Mail me at someone@example.com (or support@example.org).",
        "http://localhost:3000/api/sessions?limit=20 answered 200.",
        "fn main() { let total = items.iter().map(|i| i.price).sum::<u64>(); println!(\"{total}\"); }",
        "Commit 3f2a9c1 fixed it; see PR #42 and issue #39.",
        "The session 0d000000-demo-4000-8000-000000000001 has 7 entries.",
        "Use the Authorization header with a bearer token from the environment.",
        "const API_BASE = \"https://api.example.com/v1\";",
        "{\"tool\": \"Edit\", \"file_path\": \"src/cache.rs\", \"old_string\": \"a\", \"new_string\": \"b\"}",
        "SELECT id, title FROM sessions WHERE agent = 'alpha' ORDER BY last_timestamp DESC;",
        "[link](https://docs.rs/image/latest/image/struct.Limits.html) and (see above).",
        "sk-learn and scikit-learn are the same thing; pip install scikit-learn.",
        "The JWT header starts with ey, and a key id kid=main.",
        "-----BEGIN CERTIFICATE----- is not a private key.",
        "1. Open the file.\n2. Change the value.\n3. Save it.",
        "缓存策略怎么定? 再構築のときにキャッシュを消す",
    ]
}
