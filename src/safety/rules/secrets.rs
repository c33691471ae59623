//! Keys in the text, and secrets read and sent to another machine.

use std::sync::LazyLock;

use regex::Regex;

use super::{emit, hit, Context::*};
use crate::safety::document::{Document, Line};
use crate::safety::{regex, Category::*, RawFinding, Risk};

/// Key and token shapes (the vendors' documented prefixes).
static KEY_SHAPES: LazyLock<Vec<(Regex, &'static str, Risk)>> = LazyLock::new(|| {
    [
        (r"\b(AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", "an AWS access key", Risk::High),
        (r#"(?i)aws_secret_access_key\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}"#, "an AWS secret key", Risk::High),
        (r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{22,}", "a GitHub token", Risk::High),
        (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab token", Risk::High),
        (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "a Slack token", Risk::High),
        (r"hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}", "a Slack webhook secret", Risk::High),
        (r"\bsk-ant-[A-Za-z0-9_-]{20,}", "an Anthropic API key", Risk::High),
        (r"\bsk-(proj-|svcacct-)?[A-Za-z0-9_-]{32,}", "an OpenAI API key", Risk::High),
        (r"\b(sk|rk)_live_[A-Za-z0-9]{16,}", "a Stripe live key", Risk::High),
        (r"\bAIza[0-9A-Za-z_-]{35}\b", "a Google API key", Risk::High),
        (r"\bnpm_[A-Za-z0-9]{36}\b", "an npm token", Risk::High),
        (r"\b(hf_[A-Za-z0-9]{30,})\b", "a Hugging Face token", Risk::High),
        (r"-----BEGIN ((RSA|DSA|EC|OPENSSH|PGP|ENCRYPTED) )?PRIVATE KEY( BLOCK)?-----", "a private key", Risk::Critical),
        (r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", "a signed token (JWT)", Risk::Medium),
        (r#"(?i)\b[a-z][a-z0-9+]*://[^\s:/@'"]+:([^\s:/@'"$<{]{6,})@"#, "a password in a URL", Risk::Medium),
        (r#"(?i)\b(password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b\s*[:=]\s*["']?([^\s"'`,;$<{]{12,})"#, "a password or key", Risk::Medium),
    ]
    .into_iter()
    .map(|(p, what, risk)| (regex(p).expect("compiles"), what, risk))
    .collect()
});

/// Placeholders are not secrets: `your-key-here`, `xxxx`, `<token>`, AWS's documented example.
fn looks_like_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "example",
        "xxxx",
        "your",
        "placeholder",
        "redacted",
        "dummy",
        "sample",
        "changeme",
        "change_me",
        "replace",
        "token_value",
        "secret_value",
        "******",
        "...",
        "…",
        "password",
        "env.",
        "environ",
        "getenv",
        "secrets.",
    ];
    if WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    shannon_entropy(value) < 3.0
}

fn shannon_entropy(value: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in value.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let length = value.chars().count() as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / length;
            -p * p.log2()
        })
        .sum()
}

pub(super) fn credentials(line: &Line, findings: &mut Vec<RawFinding>) {
    for (regex, what, risk) in KEY_SHAPES.iter() {
        let Some(captures) = regex.captures(&line.text) else {
            continue;
        };
        let whole = captures.get(0).expect("match");
        let value = captures
            .iter()
            .skip(1)
            .flatten()
            .last()
            .filter(|_| *risk == Risk::Medium)
            .map_or(whole.as_str(), |m| m.as_str());
        let (risk, message) = if *risk == Risk::Critical {
            (*risk, format!("contains {what}: delete it from the skill, and replace the key, which is no longer secret"))
        } else if looks_like_placeholder(value) {
            if whole.as_str().contains("EXAMPLE") {
                (Risk::Low, format!("contains {what} that is a documented example, not a live one: fine, but use a placeholder such as <KEY>"))
            } else {
                continue;
            }
        } else {
            (*risk, format!("contains what looks like {what}: remove it, read it from the environment or a secret store instead, and revoke the key"))
        };
        emit(
            findings,
            line,
            hit(
                "credentials.in-text",
                Credentials,
                risk,
                Always,
                whole.range(),
                message,
            ),
        );
    }
}

/// Where secrets live: key files, credential stores, a dump of the whole environment.
static SECRET_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r#"(?i)\.ssh(/?(\s|$|["')|;*])|/id_\w+(\s|$|["')|;,]))|\bid_(rsa|dsa|ecdsa|ed25519)(\s|$|["')|;,])|"#,
        r#"\.aws(/credentials|/config|/?(\s|$|["')|;]))|\.gnupg\b|\.kube/config\b|\.docker/config\.json|"#,
        r#"\.netrc\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|\.pgpass\b|\.(bash|zsh)_history\b|"#,
        r#"/etc/(shadow|passwd|sudoers)\b|\bwallet\.dat\b|Login\s+Data|\bCookies\b|logins\.json|key4\.db|cookies\.sqlite|\bkeychain\b|find-generic-password|"#,
        r#"(^|[\s'"=(/])\.env(\s|$|["')|;>,])|gcloud/(credentials|application_default)|"#,
        r#"(^\s*|[|;&(`{]\s*|\$\(\s*)(printenv|env|set)\s*($|[|;)>`}])|\bdict\s*\(\s*os\.environ\s*\)|os\.environ\.(copy|items)\s*\(|"#,
        r#"str\s*\(\s*os\.environ\s*\)|JSON\.stringify\s*\(\s*process\.env\s*\)|/proc/\S*/environ|\bgh\s+auth\s+token\b|"#,
        r#"\baws\s+configure\s+(export-credentials|get)\b"#
    ))
    .expect("compiles")
});

/// Whether `path` names a place secrets live (the code pass asks it of the paths code reads).
pub(in crate::safety) fn names_secret(path: &str) -> bool {
    SECRET_SOURCE.is_match(path)
}

/// Sends data (not just a request) to another machine.
static DATA_SINK: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)\bcurl\b[^\n]*(\s(-d|--data[\w-]*|-F|--form|-T|--upload-file)(\s|=)|@-)|",
        r"\bwget\b[^\n]*--(post|body)-(data|file)|\b(nc|ncat|netcat|socat|telnet)\s+[^\s|;]+\s+\d+|/dev/(tcp|udp)/|",
        r"\bscp\b[^\n]*\S+:|\brsync\b[^\n]*\s\S*:\S*|\brequests\.(post|put|patch)\s*\(|\bhttpx\.(post|put)\s*\(|",
        r"\burllib\.request\.(urlopen|Request)\s*\(|\bfetch\s*\([^)]*(method\s*:\s*['\x22](POST|PUT)|body\s*:)|",
        r"\baxios\.(post|put)\s*\(|Invoke-(WebRequest|RestMethod)[^\n]*-(Body|InFile)|\b(mail|sendmail|mutt)\b[^\n]*@|",
        r"\bgh\s+(gist\s+create|release\s+(create|upload))\b|\baws\s+s3\s+(cp|sync|mv)\b|\bgsutil\s+(cp|rsync)\b|\brclone\s+(copy|sync)\b|",
        r"\bnpm\s+publish\b|\burlopen\s*\(|\|\s*(curl|wget|nc|ncat|netcat)\b"
    ))
    .expect("compiles")
});

/// An auth header is how a token is *meant* to be sent; it says nothing about exfiltration.
static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    regex(r#"(?i)(-H|--header)\s+["'][^"']*["']|authorization\s*[:=]\s*\S+"#).expect("compiles")
});

static ASSIGNED: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s*(export\s+|local\s+|const\s+|let\s+|var\s+)?([A-Za-z_]\w*)\s*=").expect("compiles")
});
static OUTPUT_FILE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?:>>?|\s-o|\btar\s+-?c\w*f|\bzip\s+(?:-\w+\s+)*)\s*(\S+)").expect("compiles")
});

/// Secrets read and sent: on one line, or read on one line (into a variable, a file or a
/// folder) and sent later — from a line that names it, or a code block that does.
pub(super) fn exfiltration(document: &Document, findings: &mut Vec<RawFinding>) {
    const MESSAGE: &str = "reads secrets (keys, credentials, the environment) and sends them to another machine: delete the upload; nothing in a skill should send keys anywhere";
    // Each line with its auth headers blanked out, and whether it reads a secret: once, as the
    // block scans below look at every line again.
    let cleaned: Vec<String> = document
        .lines
        .iter()
        .map(|line| AUTH_HEADER.replace_all(&line.text, " ").into_owned())
        .collect();
    let reads_secret: Vec<bool> = cleaned
        .iter()
        .map(|text| SECRET_SOURCE.is_match(text))
        .collect();
    let mut read_into: Vec<String> = Vec::new();
    let mut blocks_reading_secrets: Vec<usize> = Vec::new();
    for (index, line) in document.lines.iter().enumerate() {
        let text = &cleaned[index];
        let sends = DATA_SINK.is_match(text);
        if reads_secret[index] && sends {
            secret_upload(findings, line, Risk::Critical, MESSAGE.into());
            continue;
        }
        if reads_secret[index] {
            let named_before = read_into.len();
            read_into.extend(ASSIGNED.captures(text).map(|c| c[2].to_string()));
            read_into.extend(OUTPUT_FILE.captures(text).map(|c| c[1].to_string()));
            read_into.extend(copy_destination(text));
            // A secret kept in a name is followed by that name; one that is not (a grouped
            // `{ env; cat ~/.aws/credentials; } | gzip > f`) may leave with any later upload.
            if read_into.len() == named_before {
                blocks_reading_secrets.extend(line.block);
            }
            continue;
        }
        if !sends {
            continue;
        }
        let carries = read_into.iter().find(|name| {
            carries_name(text, name)
                || (line.block.is_some()
                    && document.lines.iter().enumerate().any(|(other, l)| {
                        l.block == line.block
                            && !reads_secret[other]
                            && carries_name(&cleaned[other], name)
                    }))
        });
        let same_block = line
            .block
            .is_some_and(|block| blocks_reading_secrets.contains(&block));
        match carries {
            Some(name) => secret_upload(
                findings,
                line,
                Risk::Critical,
                format!("{MESSAGE} (`{name}` holds what was read above)"),
            ),
            None if same_block => secret_upload(
                findings,
                line,
                Risk::High,
                "reads secrets (keys, credentials, the environment) and sends data to another machine in the same steps: make sure the upload carries none of them, or delete it".into(),
            ),
            None => {}
        }
    }
}

/// Words to the agent to send a file or its contents somewhere, untouched.
static UPLOAD_INSTRUCTION: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(submit|upload|send|post|attach|transmit)\b[^.;]{0,80}\b(the file|this file|that file|its contents|the contents|unmodified|as[- ]is|verbatim|the real values|unredacted)\b").expect("compiles")
});
/// A secret file named in prose: a project's `.env` (not its example), stored credentials, keys.
static SECRET_FILE_NAMED: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(^|[\s`'(/])\.env(\.(local|production|prod|development|dev|staging))?([\s`',.)]|$)|\.aws/credentials|\bid_(rsa|ed25519|ecdsa)\b|\.npmrc\b|\.netrc\b|\.pypirc\b|\.kube/config|\.git-credentials").expect("compiles")
});
/// Another machine's address in the text.
static REMOTE_ADDRESS: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\bhttps?://(localhost|127\.|0\.0\.0\.0|\[::1\])").expect("compiles")
});
static ANY_ADDRESS: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\bhttps?://[\w.-]+").expect("compiles"));
/// Words that turn an instruction around.
static NEGATED: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(never|not|don't|do not|must not|without|no)\b").expect("compiles")
});
/// How many prose lines back a step may point at the secret file as "the file".
const SECRET_FILE_REACH: usize = 12;

/// A secret file sent by words alone: prose names a project's `.env` or a key file, and a step
/// soon after tells the agent to submit "the file" (or its contents, unmodified) to an address
/// of another machine in the skill. No command shows it; the agent is to use any HTTP tool.
pub(super) fn instructed_upload(document: &Document, findings: &mut Vec<RawFinding>) {
    let prose = |line: &Line| !line.code && !line.counterexample && !line.discussed;
    let sends_elsewhere = document.lines.iter().any(|line| {
        ANY_ADDRESS
            .find_iter(&line.text)
            .any(|m| !REMOTE_ADDRESS.is_match(m.as_str()))
    });
    if !sends_elsewhere {
        return;
    }
    let mut named_at: Option<usize> = None;
    for (index, line) in document.lines.iter().enumerate() {
        if !prose(line) || NEGATED.is_match(&line.text) {
            continue;
        }
        if SECRET_FILE_NAMED.is_match(&line.text) {
            named_at = Some(index);
        }
        let Some(named) = named_at.filter(|named| index - named <= SECRET_FILE_REACH) else {
            continue;
        };
        let Some(span) = UPLOAD_INSTRUCTION.find(&line.text).map(|m| m.range()) else {
            continue;
        };
        let named_line = document.lines[named].number;
        emit(
            findings,
            line,
            hit(
                "exfiltration.secret-file-upload",
                Exfiltration,
                Risk::High,
                Instruction,
                span,
                format!("tells the agent to send a secret file (named on line {named_line}) to another machine as it is: keys and passwords in it leave with it; delete the step, or check key names locally without sending values"),
            ),
        );
        return;
    }
}

/// Records an upload of secrets, pointing at it in the line as written (the matching ran on
/// the line with its auth headers blanked out, whose positions differ).
fn secret_upload(findings: &mut Vec<RawFinding>, line: &Line, risk: Risk, message: String) {
    let source = SECRET_SOURCE.find(&line.text);
    let span = match (source, DATA_SINK.find(&line.text)) {
        (Some(source), Some(sink)) => {
            source.start().min(sink.start())..source.end().max(sink.end())
        }
        (_, Some(sink)) => sink.range(),
        _ => 0..0,
    };
    emit(
        findings,
        line,
        hit(
            "exfiltration.secret-upload",
            Exfiltration,
            risk,
            Command,
            span,
            message,
        ),
    );
}

/// Where `cp`, `rsync` or `mv` puts what it copies: its last argument, redirects aside.
fn copy_destination(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let command = words
        .iter()
        .position(|w| matches!(*w, "cp" | "rsync" | "mv"))?;
    words[command + 1..]
        .iter()
        .rfind(|w| !w.starts_with('-') && !w.contains('>'))
        .map(|w| w.trim_end_matches('/').to_string())
        .filter(|w| w.len() > 1)
}

/// Whether `text` uses the variable or file `name` (a variable as a whole word).
fn carries_name(text: &str, name: &str) -> bool {
    let looks_like_variable = name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !looks_like_variable {
        // `gh gist create *.txt` sends `aws-profile.txt` too.
        let by_glob = name
            .rsplit_once('.')
            .is_some_and(|(_, extension)| text.contains(&format!("*.{extension}")));
        return text.contains(name) || by_glob;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}
