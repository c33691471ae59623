//! Writes that outlive the task: start-up files, schedules, services, hooks, keys, other agents'
//! instructions.

use std::sync::LazyLock;

use regex::Regex;

use super::{emit, hit, Context::*};
use crate::safety::document::{Document, Line};
use crate::safety::{regex, Category::*, RawFinding, Risk};

/// A write in code: a redirect (not `2>` or `&>`), tee, copy, an in-place edit, a config set.
static WRITE: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)((^|[^0-9&>])>>?|\btee\b|\bcp\b|\bmv\b|\bln\s+-s|\bsed\s+-i|\binstall\s+-|\bdd\b|\bgit\s+config\b|",
        r"open\([^)]*['\x22][aw]\+?['\x22]|write_text|appendFile|writeFile|Add-Content|Set-Content|Out-File)"
    ))
    .expect("compiles")
});

/// A write in prose: an instruction to the agent to change a file.
static WRITE_VERB: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)\b(append|add|write|insert|prepend|put|save|create|sets?|edit|modify|update|overwrite|replace)\b")
        .expect("compiles")
});

/// A write that adds to what a file holds rather than writing it afresh.
static APPENDS: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)>>|\btee\s+-a\b|\bsed\s+-i\b|\b(append|add|insert|prepend|echo)\b|['\x22]a\+?['\x22]|appendFile|Add-Content")
        .expect("compiles")
});

static HEREDOC: LazyLock<Regex> =
    LazyLock::new(|| regex(r#"<<-?\s*['"]?(\w+)['"]?"#).expect("compiles"));

/// What a persistent change carries that makes it an attack rather than a convenience.
static PAYLOAD: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"(?i)\b(curl|wget|nc|ncat|netcat|socat|base64|python[0-9.]*\s+-c|bash\s+-i|iwr|irm)\b|/dev/tcp/|",
        r"\balias\s+(sudo|ls|cd|git|ssh|cat|rm)=|\bPROMPT_COMMAND=|\bLD_PRELOAD="
    ))
    .expect("compiles")
});

/// Where to look for what a persistent change carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PayloadScope {
    /// The line and the here-document it starts: a shell start-up file gets only that.
    Line,
    /// The whole code block: a hook or a job is written in one place and installed in another.
    Block,
}

struct PersistenceTarget {
    rule: &'static str,
    pattern: &'static str,
    /// The pattern names the writing itself (`| crontab -`), so no separate write is needed.
    writes_itself: bool,
    /// Risk of the change on its own, when it replaces the file, and with a payload.
    risk: Risk,
    replace_risk: Risk,
    with_payload: Risk,
    payload_scope: PayloadScope,
    what: &'static str,
}

const PERSISTENCE_TARGETS: &[PersistenceTarget] = &[
    PersistenceTarget {
        rule: "persistence.authorized-keys",
        pattern: r"authorized_keys2?\b",
        writes_itself: false,
        risk: Risk::Critical,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Line,
        what: "adds a key to authorized_keys, which lets its owner log in to this machine: delete it; a person adds keys themselves",
    },
    PersistenceTarget {
        rule: "persistence.agent-config",
        pattern: r"(?i)(\.hermes/|\.zeph/|\.claude/|\.codex/|\.continue/|\.aider\.conf|/skills/[\w.-]+/SKILL\.md|\$\{?\w+\}?/SKILL\.md)",
        writes_itself: false,
        risk: Risk::High,
        replace_risk: Risk::High,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Block,
        what: "rewrites an agent's own settings or another skill, so the change outlives this task and reaches other work: delete it; a skill changes only its own folder",
    },
    PersistenceTarget {
        rule: "persistence.agent-instructions",
        pattern: r"(?i)(AGENTS\.md|CLAUDE\.md|GEMINI\.md|\.cursorrules|\.cursor/rules|\.windsurfrules|copilot-instructions\.md|\.clinerules)",
        writes_itself: false,
        risk: Risk::High,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Block,
        what: "adds to another agent's instruction file, so its words reach every later session: delete it, unless writing that file is exactly the task the person asked for",
    },
    PersistenceTarget {
        rule: "persistence.shell-startup",
        pattern: r"(?i)\.(bashrc|zshrc|profile|bash_profile|zprofile|zshenv|bash_login|config/fish/config\.fish)\b|/etc/profile",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Line,
        what: "changes the shell's start-up file, so it runs in every future shell",
    },
    PersistenceTarget {
        rule: "persistence.scheduled",
        pattern: r"(?i)\|\s*crontab(\s+-)?\s*($|[;&)])|\bcrontab\s+[\w./-]+\.(txt|cron|tab)\b|@reboot\b|\bschtasks\s+/create\b",
        writes_itself: true,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Block,
        what: "schedules a command to run again later, on its own",
    },
    PersistenceTarget {
        rule: "persistence.scheduled",
        pattern: r"(?i)/etc/cron\.\w+/|/etc/crontab\b|/var/spool/cron|\\CurrentVersion\\Run\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::Critical,
        payload_scope: PayloadScope::Block,
        what: "schedules a command to run again later, on its own",
    },
    PersistenceTarget {
        rule: "persistence.service",
        pattern: r"(?i)\.config/systemd/user/|/etc/systemd/system/|\bsystemctl\s+(--user\s+)?enable\b|Library/Launch(Agents|Daemons)|\blaunchctl\s+(load|bootstrap)\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::High,
        payload_scope: PayloadScope::Block,
        what: "installs a service that starts by itself",
    },
    PersistenceTarget {
        rule: "persistence.git-hooks",
        pattern: r"(?i)\.git/hooks/[\w-]+|\bcore\.hooksPath\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::High,
        payload_scope: PayloadScope::Block,
        what: "installs a git hook, which runs on every commit or push",
    },
    PersistenceTarget {
        rule: "persistence.ssh-config",
        pattern: r"(?i)\.ssh/config\b|\bProxyCommand\b",
        writes_itself: false,
        risk: Risk::Medium,
        replace_risk: Risk::Medium,
        with_payload: Risk::High,
        payload_scope: PayloadScope::Line,
        what: "changes the SSH client's settings, which every later connection follows",
    },
];

static PERSISTENCE_REGEXES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    PERSISTENCE_TARGETS
        .iter()
        .map(|t| regex(t.pattern).expect("compiles"))
        .collect()
});

/// What writing a path outlives the task, for the code pass: the rule, its words, its risk, and
/// its risk when what is written fetches code or opens a connection.
pub(in crate::safety) struct Outlives {
    pub rule: &'static str,
    pub what: &'static str,
    pub risk: Risk,
    /// Its risk when the whole file is written or copied rather than added to.
    pub replace_risk: Risk,
    pub with_payload: Risk,
}

/// The persistence a path code writes stands for (a shell start-up file, a unit, another
/// agent's instructions), if any.
pub(in crate::safety) fn persistence_target(path: &str) -> Option<Outlives> {
    PERSISTENCE_TARGETS
        .iter()
        .zip(PERSISTENCE_REGEXES.iter())
        .find(|(target, regex)| !target.writes_itself && regex.is_match(path))
        .map(|(target, _)| Outlives {
            rule: target.rule,
            what: target.what,
            risk: target.risk,
            replace_risk: target.replace_risk,
            with_payload: target.with_payload,
        })
}

/// Writes that outlive the task. A cron job or a shell alias may be what the person asked for
/// (`medium`); one that fetches or opens a connection is how an attacker stays (`critical`).
pub(super) fn persistence(document: &Document, line: &Line, findings: &mut Vec<RawFinding>) {
    let write = if line.code {
        WRITE.find(&line.text)
    } else {
        WRITE_VERB.find(&line.text)
    };
    for (target, regex) in PERSISTENCE_TARGETS.iter().zip(PERSISTENCE_REGEXES.iter()) {
        let Some(found) = regex.find(&line.text) else {
            continue;
        };
        let written =
            target.writes_itself || write.is_some_and(|w| !line.code || w.start() < found.start());
        if !written {
            continue;
        }
        let carries_payload = PAYLOAD.is_match(&line.text)
            || match target.payload_scope {
                PayloadScope::Line => {
                    heredoc_body(document, line).any(|l| PAYLOAD.is_match(&l.text))
                }
                PayloadScope::Block => {
                    line.block.is_some()
                        && document
                            .lines
                            .iter()
                            .any(|l| l.block == line.block && PAYLOAD.is_match(&l.text))
                }
            };
        let (risk, message) = if carries_payload {
            (
                target.with_payload,
                format!(
                    "{}, and what it adds fetches code or opens a connection: delete it",
                    target.what
                ),
            )
        } else if !APPENDS.is_match(&line.text) && target.replace_risk < target.risk {
            (
                target.replace_risk,
                format!(
                    "{} (here it copies or writes the whole file: check what it puts there)",
                    target.what
                ),
            )
        } else if target.risk == Risk::Medium {
            (
                Risk::Medium,
                format!(
                    "{}: keep it only if the person asked for exactly this",
                    target.what
                ),
            )
        } else {
            (target.risk, target.what.to_string())
        };
        emit(
            findings,
            line,
            hit(
                target.rule,
                Persistence,
                risk,
                Command,
                found.range(),
                message,
            ),
        );
    }
}

/// The lines of a here-document that `line` starts, if it starts one.
fn heredoc_body<'a>(document: &'a Document, line: &'a Line) -> impl Iterator<Item = &'a Line> {
    let marker = HEREDOC.captures(&line.text).map(|c| c[1].to_string());
    document
        .lines
        .iter()
        .skip_while(move |l| !std::ptr::eq(*l, line))
        .skip(1)
        .take_while(move |l| {
            marker
                .as_deref()
                .is_some_and(|m| l.block == line.block && l.text.trim() != m)
        })
}
