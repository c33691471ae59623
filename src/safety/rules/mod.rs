//! The rules: what each looks for, how bad it is, and what the person should do about it.
//!
//! Most rules are patterns over one logical line (`table.rs`); a few need more than a pattern —
//! a secret read on one line and sent on the next, a file downloaded and then run, a key shape
//! that is only a placeholder — and are functions in `commands.rs`, `secrets.rs`,
//! `persistence.rs` and `hidden.rs`. Every match passes through [`emit`],
//! which applies the context: a command shown as what not to do is `low`, an instruction that
//! the text discusses rather than gives is `low`, and anything hidden in an HTML comment is at
//! least `high`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Regex, RegexSet, RegexSetBuilder};

use super::document::{is_negated_context, Document, Line, DISCUSSION};
use super::{
    ascii_word_boundaries, excerpt, regex, Category, Category::Credentials, RawFinding, Risk,
};

/// How a rule's match depends on its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A command: shown as what not to do, it is a warning, not an instruction.
    Command,
    /// Words addressed to the agent: quoted in a discussion of attacks, they are not an attack.
    Instruction,
    /// Harmful wherever it stands (a key, a reverse shell).
    Always,
}

struct Rule {
    id: &'static str,
    category: Category,
    risk: Risk,
    /// Risk inside a code block, when it differs (fake chat markup is data in a code sample).
    code_risk: Option<Risk>,
    context: Context,
    patterns: &'static [&'static str],
    message: &'static str,
}

use Context::*;

const PIPE_TO_SHELL: &str = "download-execute.pipe-to-shell";

/// Installers that vendors publish as `curl … | sh`; the pattern is still risky, but no
/// stranger's code: `medium`, so it does not bury real findings.
const KNOWN_INSTALLERS: &[&str] = &[
    "https://sh.rustup.rs",
    "https://get.docker.com",
    "https://raw.githubusercontent.com/Homebrew/install/",
    "https://deb.nodesource.com/",
    "https://astral.sh/uv/",
    "https://install.python-poetry.org",
    "https://bun.sh/install",
    "https://deno.land/install.sh",
    "https://get.pnpm.io/",
    "https://raw.githubusercontent.com/nvm-sh/nvm/",
    "https://nixos.org/nix/install",
    "https://get.sdkman.io",
];

/// What a rule's match means less than its rule says, by what else the line holds.
enum Mitigation {
    NotAFinding,
    Lower(Risk, &'static str),
}

static OFFICIAL_INDEX: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)https://(pypi\.org/simple|files\.pythonhosted\.org|registry\.npmjs\.org)\b")
        .expect("compiles")
});
/// A host or port written as a placeholder (`/dev/tcp/<ip>/<port>`): a pattern to recognise,
/// with nowhere to connect.
static PLACEHOLDER_HOST: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)(/dev/(tcp|udp)/|\s)<[a-z][a-z_ -]*>(/|\s|:|$)|\(\s*\(?\s*(\.\.\.|…)\s*\)?\s*\)")
        .expect("compiles")
});
/// "Do not tell the user a token is valid": a claim the agent must not make, not something
/// kept from the person.
static CLAIM_WITHHELD: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(tell|inform|assure)\s+(the\s+)?(user|person|human)\s+(that\s+)?((a|an|the|this|it|its|their)\s+)?([\w-]+\s+)?(is|are)\s+(valid|safe|correct|true|secure|verified|trusted|genuine|authentic)\b")
        .expect("compiles")
});
static LOCAL_DATABASE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(localhost|127\.0\.0\.1|\w+_test|test_\w+|\w+_dev|dev_\w+)\b").expect("compiles")
});

fn mitigation(rule: &str, text: &str) -> Option<Mitigation> {
    match rule {
        PIPE_TO_SHELL if from_known_installer(text) => Some(Mitigation::Lower(
            Risk::Medium,
            "runs a vendor's installer straight from the network: it is a well-known installer, but prefer the package manager, or download it, check it and run the file",
        )),
        "network.reverse-shell" if PLACEHOLDER_HOST.is_match(text) => Some(Mitigation::Lower(
            Risk::Low,
            "shows a reverse shell with placeholders for its host and port: a pattern to recognise, not one that connects anywhere",
        )),
        "injection.conceal-from-user" if CLAIM_WITHHELD.is_match(text) => {
            Some(Mitigation::NotAFinding)
        }
        "download-execute.custom-index" if OFFICIAL_INDEX.is_match(text) => {
            Some(Mitigation::NotAFinding)
        }
        "destructive.database" if LOCAL_DATABASE.is_match(text) => Some(Mitigation::Lower(
            Risk::Medium,
            "destroys a database that looks local or a test one: make sure it is, and that nothing else uses it",
        )),
        _ => None,
    }
}

/// Whether the line's only URL is a known installer's (a second URL could be the real one).
fn from_known_installer(text: &str) -> bool {
    let mut urls = text.match_indices("://");
    let (Some((first, _)), None) = (urls.next(), urls.next()) else {
        return false;
    };
    // The scheme starts after the last character that is not an ASCII letter.
    let start = text[..first]
        .char_indices()
        .rfind(|(_, c)| !c.is_ascii_alphabetic())
        .map_or(0, |(i, c)| i + c.len_utf8());
    KNOWN_INSTALLERS
        .iter()
        .any(|url| text[start..].starts_with(url))
}

mod commands;
mod hidden;
mod persistence;
mod secrets;
mod table;

use table::RULES;

pub(super) use persistence::{persistence_target, Outlives};
pub(super) use secrets::names_secret;

/// Room for the rule set's lazy DFA.
const DFA_CACHE_BYTES: usize = 64 << 20;

static COMPILED: LazyLock<(RegexSet, Vec<(usize, Regex)>)> = LazyLock::new(|| {
    let patterns: Vec<(usize, &str)> = RULES
        .iter()
        .enumerate()
        .flat_map(|(index, rule)| rule.patterns.iter().map(move |p| (index, *p)))
        .collect();
    // The whole table in one set is matched once per line; a lazy DFA cache too small for ~100
    // patterns thrashes and falls back to a slower engine (a 1 KiB skill took 3 ms, not 0.1).
    let set = RegexSetBuilder::new(patterns.iter().map(|(_, p)| ascii_word_boundaries(p)))
        .dfa_size_limit(DFA_CACHE_BYTES)
        .build()
        .expect("rule patterns compile");
    let regexes = patterns
        .iter()
        .map(|(index, p)| (*index, regex(p).expect("rule pattern compiles")))
        .collect();
    (set, regexes)
});

pub(super) fn check(document: &Document) -> Vec<RawFinding> {
    let mut findings = Vec::new();
    for (index, line) in document.lines.iter().enumerate() {
        pattern_rules(line, |_, _| true, &mut findings);
        if let Some(joined) = joined_with_next(line, document.lines.get(index + 1)) {
            // Words to the agent run across a line break as often as not; only what crosses it
            // is new here.
            let boundary = line.text.len();
            pattern_rules(
                &joined,
                |rule, span| {
                    rule.context == Instruction && span.start < boundary && span.end > boundary + 1
                },
                &mut findings,
            );
        }
        commands::remove_recursively(line, &mut findings);
        commands::force_push(line, &mut findings);
        commands::unpinned_install(line, &mut findings);
        secrets::credentials(line, &mut findings);
        persistence::persistence(document, line, &mut findings);
        hidden::hidden_instructions(line, &mut findings);
        hidden::encoded_blob(line, &mut findings);
    }
    secrets::exfiltration(document, &mut findings);
    secrets::instructed_upload(document, &mut findings);
    commands::download_then_run(document, &mut findings);
    findings
}

/// The table's rules on one line, where `accept` takes the rule and the match.
fn pattern_rules(
    line: &Line,
    accept: impl Fn(&Rule, &Range<usize>) -> bool,
    findings: &mut Vec<RawFinding>,
) {
    let (set, regexes) = &*COMPILED;
    for pattern in set.matches(&line.text).iter() {
        let (rule_index, regex) = &regexes[pattern];
        let rule = &RULES[*rule_index];
        let span = regex.find(&line.text).map_or(0..0, |m| m.range());
        if !accept(rule, &span) {
            continue;
        }
        let mut risk = match rule.code_risk {
            Some(risk) if line.code => risk,
            _ => rule.risk,
        };
        let mut message = rule.message.to_string();
        match mitigation(rule.id, &line.text) {
            Some(Mitigation::NotAFinding) => continue,
            Some(Mitigation::Lower(lower, why)) => {
                risk = risk.min(lower);
                message = why.to_string();
            }
            None => {}
        }
        emit(
            findings,
            line,
            hit(rule.id, rule.category, risk, rule.context, span, message),
        );
    }
}

/// A prose line and the next one of its paragraph, as one line numbered like the first.
fn joined_with_next(line: &Line, next: Option<&Line>) -> Option<Line> {
    let next = next.filter(|next| {
        !line.code
            && !next.code
            && next.hidden == line.hidden
            && next.number == line.number + 1
            && !next.text.trim_start().starts_with(['#', '-', '*', '|'])
    })?;
    Some(Line {
        number: line.number,
        original: format!("{} {}", line.original, next.original),
        text: format!("{} {}", line.text, next.text),
        code: false,
        hidden: line.hidden,
        counterexample: line.counterexample,
        discussed: line.discussed,
        block: None,
    })
}

/// One match before its context is applied.
struct Hit {
    rule: &'static str,
    category: Category,
    risk: Risk,
    context: Context,
    span: Range<usize>,
    message: String,
}

/// Applies the line's context to a match and records it.
fn emit(findings: &mut Vec<RawFinding>, line: &Line, hit: Hit) {
    let Hit {
        rule,
        category,
        mut risk,
        context,
        span,
        mut message,
    } = hit;
    let elsewhere = format!("{} {}", &line.text[..span.start], &line.text[span.end..]);
    if line.hidden {
        if risk >= Risk::Medium {
            risk = risk.max(Risk::High);
            message += "; it sits in an HTML comment, which a person reading the skill never sees";
        }
    } else {
        // A key is a leak however it is introduced, so credentials are never "discussed".
        let discussed = category != Credentials
            && (line.discussed || (!line.code && DISCUSSION.is_match(&elsewhere)));
        let (cap, why) = match context {
            Command if line.counterexample || is_negated_context(&elsewhere) => {
                (Risk::Low, " (shown here as something not to do, so it stays low)")
            }
            _ if discussed => (
                Risk::Low,
                " (the text discusses it or searches for it rather than asking for it, so it stays low)",
            ),
            Instruction if is_quoted(&line.text, &span) => (
                Risk::Low,
                " (it stands in quotation marks, quoted rather than said, so it stays low)",
            ),
            Instruction if line.counterexample => (
                Risk::Low,
                " (shown here as an example to recognise, so it stays low)",
            ),
            Instruction if line.code => (
                Risk::Medium,
                " (in a code block it reads as data, not as words to the agent; check why it is there)",
            ),
            _ => (Risk::Critical, ""),
        };
        if risk > cap {
            risk = cap;
            message += why;
        }
    }
    findings.push(RawFinding {
        rule,
        category,
        risk,
        line: line.number,
        excerpt: excerpt_of(line, span),
        message,
    });
}

/// Whether `span` of `text` sits between quotation marks.
fn is_quoted(text: &str, span: &Range<usize>) -> bool {
    let (before, after) = (&text[..span.start], &text[span.end..]);
    let straight = before.matches('"').count() % 2 == 1 && after.contains('"');
    let curly = before.matches('“').count() > before.matches('”').count() && after.contains('”');
    straight || curly
}

/// The line as written; a long line is cut around the match (positions are those of the
/// normalized text, which equals the written one whenever no character was mapped).
fn excerpt_of(line: &Line, span: Range<usize>) -> String {
    const CONTEXT_BYTES: usize = 40;
    if line.original.len() <= 120 || line.original != line.text {
        return excerpt(&line.original);
    }
    let mut start = span.start.saturating_sub(CONTEXT_BYTES);
    while !line.text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (span.end + CONTEXT_BYTES).min(line.text.len());
    while !line.text.is_char_boundary(end) {
        end += 1;
    }
    let prefix = if start > 0 { "…" } else { "" };
    excerpt(&format!("{prefix}{}", &line.text[start..end]))
}

fn hit(
    rule: &'static str,
    category: Category,
    risk: Risk,
    context: Context,
    span: Range<usize>,
    message: impl Into<String>,
) -> Hit {
    Hit {
        rule,
        category,
        risk,
        context,
        span,
        message: message.into(),
    }
}
