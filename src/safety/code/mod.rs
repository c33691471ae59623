//! The second pass of the safety check: code is parsed, not grepped. Scripts in a skill folder
//! and fenced blocks of a SKILL.md in shell, Python and JavaScript are parsed with tree-sitter,
//! and each language's walker turns what the code does into shared operations (`flow.rs`):
//! read a secret, fetch, send, run a shell or code, query a database, write a file. A value
//! carries where it came from across lines, blocks and files of one skill (`value.rs`), so a key
//! read in one step and sent in another is one finding that names both places.
//!
//! Code a shell runs from inside another language — `python3 - <<'PY'`, `node -e "…"`,
//! `bash -c "…"` with a known text — is parsed as that language in turn.

mod flow;
mod javascript;
mod python;
mod shell;
mod value;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use tree_sitter::{Node, Parser, Tree};

use super::document::Document;
use super::Finding;
use flow::Flow;
use value::{Place, Value};

/// The languages the pass parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Language {
    Shell,
    Python,
    JavaScript,
    /// Walked as JavaScript; its own grammar reads the type annotations.
    TypeScript,
    /// A Makefile's recipes, which are shell lines.
    Make,
}

impl Language {
    /// From a fence's info string (`bash`, `py`, `node`, …).
    fn from_fence(info: &str) -> Option<Language> {
        let word = info
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        match word.as_str() {
            // A bare fence in a skill is most often a command to type.
            "" | "bash" | "sh" | "shell" | "zsh" | "console" | "terminal" | "shellsession"
            | "ksh" | "dash" => Some(Language::Shell),
            "python" | "py" | "python3" | "py3" | "ipython" => Some(Language::Python),
            "js" | "javascript" | "node" | "nodejs" | "mjs" | "cjs" | "jsx" => {
                Some(Language::JavaScript)
            }
            "ts" | "typescript" | "tsx" => Some(Language::TypeScript),
            "make" | "makefile" => Some(Language::Make),
            _ => None,
        }
    }

    /// From a script's file name, then its `#!` line.
    pub(super) fn of_script(name: &str, text: &str) -> Option<Language> {
        let extension = Path::new(name)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("sh" | "bash" | "zsh" | "ksh" | "command") => return Some(Language::Shell),
            Some("py" | "pyw") => return Some(Language::Python),
            Some("js" | "mjs" | "cjs" | "jsx") => return Some(Language::JavaScript),
            Some("ts" | "mts" | "cts" | "tsx") => return Some(Language::TypeScript),
            Some("mk") => return Some(Language::Make),
            _ => {}
        }
        let file_name = Path::new(name)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        if matches!(file_name, "Makefile" | "makefile" | "GNUmakefile") {
            return Some(Language::Make);
        }
        let shebang = text.lines().next().filter(|l| l.starts_with("#!"))?;
        Language::of_interpreter(shebang.rsplit(['/', ' ']).find(|w| !w.is_empty())?)
    }

    /// From an interpreter's name (`python3`, `node`, `bash`).
    fn of_interpreter(program: &str) -> Option<Language> {
        let program = program.rsplit('/').next().unwrap_or(program);
        let stem = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        match stem {
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "busybox" => Some(Language::Shell),
            "python" | "pypy" => Some(Language::Python),
            "node" | "nodejs" | "bun" => Some(Language::JavaScript),
            "deno" | "tsx" | "ts-node" => Some(Language::TypeScript),
            _ => None,
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Shell | Language::Make => tree_sitter_bash::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        }
    }
}

/// A piece of code of one skill: a script, or a fenced block of a Markdown file.
pub(super) struct Unit {
    pub file: String,
    pub language: Language,
    pub text: String,
    /// 1-based line of the file where `text` starts.
    pub first_line: usize,
}

/// Code is parsed once per check; a longer text is not a skill's.
const MAX_CODE_BYTES: usize = 512 * 1024;
/// How deep code inside code (`bash -c "python -c '…'"`) is followed.
const MAX_NESTING: usize = 4;

/// The code units of a Markdown file (its fenced blocks in a parsed language) and the lines
/// its context shows as what not to do.
pub(super) fn units_of_markdown(file: &str, document: &Document) -> (Vec<Unit>, HashSet<usize>) {
    let mut units: Vec<Unit> = document
        .blocks
        .iter()
        .filter_map(|block| {
            Some(Unit {
                file: file.to_string(),
                language: Language::from_fence(&block.info)?,
                text: block.text.clone(),
                first_line: block.first_line,
            })
        })
        .collect();
    // A command in a code span of a step ("3. Publish: `npm publish`", a table's "Fix"
    // column) is a step too; one in running prose is more often named than given.
    let is_step = |text: &str| {
        let text = text.trim_start();
        text.starts_with(['-', '*', '+', '|'])
            || text
                .split_once(['.', ')'])
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    for line in document
        .lines
        .iter()
        .filter(|l| !l.code && !l.hidden && !l.discussed && !l.counterexample && is_step(&l.text))
    {
        for span in line.text.split('`').skip(1).step_by(2) {
            let span = span.trim();
            let starts_like_a_command = span.starts_with(|c: char| {
                c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '~' | '$')
            });
            if span.contains(' ') && starts_like_a_command {
                units.push(Unit {
                    file: file.to_string(),
                    language: Language::Shell,
                    text: span.to_string(),
                    first_line: line.number,
                });
            }
        }
    }
    units.sort_by_key(|u| u.first_line);
    (units, quiet_lines(document))
}

/// The lines a document shows as what not to do, discusses, or that search for a pattern.
pub(super) fn quiet_lines(document: &Document) -> HashSet<usize> {
    document
        .lines
        .iter()
        .filter(|l| l.counterexample || (l.discussed && !l.code))
        .map(|l| l.number)
        .collect()
}

/// Runs the pass over the code of one skill. Two passes: the first fills the channels between
/// steps and files (what was written where, what was exported), the second reports, so the
/// order of files does not hide a flow.
pub(super) fn check(units: &[Unit], quiet: HashMap<String, HashSet<usize>>) -> Vec<Finding> {
    let mut flow = Flow::new(quiet);
    // The scripts the code writes join the skill's code after the first pass; the second
    // fills the channels with them, the third reports.
    let mut all: Vec<Unit> = Vec::new();
    for pass in 0..3 {
        flow.emitting = pass == 2;
        if pass == 1 {
            all = std::mem::take(&mut flow.written_scripts);
        }
        // A written script runs as a program of its own: its names are its own.
        let mut scopes: HashMap<(&str, Language, usize), Scope> = HashMap::new();
        let written = all.iter().map(|unit| (unit, unit.first_line));
        for (unit, own_scope) in units.iter().map(|unit| (unit, 0)).chain(written) {
            let scope = scopes
                .entry((&unit.file, unit.language, own_scope))
                .or_default();
            let printed = analyze(
                &mut flow,
                scope,
                &Code {
                    file: &unit.file,
                    text: &unit.text,
                    first_line: unit.first_line,
                    depth: 0,
                },
                unit.language,
            );
            if unit.first_line == 1 && own_scope == 0 {
                flow.script_printed(&unit.file, printed);
            }
        }
    }
    flow.into_findings()
}

/// Names known in one file's code of one language (fenced blocks of a SKILL.md share them, as
/// the steps of one shell session do).
#[derive(Default)]
struct Scope {
    vars: HashMap<String, Value>,
}

/// Text to parse, and where it sits.
#[derive(Clone, Copy)]
struct Code<'a> {
    file: &'a str,
    text: &'a str,
    first_line: usize,
    depth: usize,
}

impl Code<'_> {
    /// The place of `node`: its file, its line, and that line's text.
    fn place(&self, node: Node) -> Place {
        let row = node.start_position().row;
        Place {
            file: self.file.to_string(),
            line: self.first_line + row,
            excerpt: self.text.lines().nth(row).unwrap_or("").trim().to_string(),
        }
    }

    fn text_of(&self, node: Node) -> &str {
        node.utf8_text(self.text.as_bytes()).unwrap_or("")
    }
}

thread_local! {
    static PARSERS: std::cell::RefCell<HashMap<Language, Parser>> = Default::default();
}

fn parse(language: Language, text: &str) -> Option<Tree> {
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = match parsers.entry(language) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut parser = Parser::new();
                parser.set_language(&language.grammar()).ok()?;
                e.insert(parser)
            }
        };
        parser.parse(text, None)
    })
}

/// Parses `code` as `language` and walks it; returns what the code prints.
fn analyze(flow: &mut Flow, scope: &mut Scope, code: &Code, language: Language) -> Value {
    if code.text.len() > MAX_CODE_BYTES || code.depth > MAX_NESTING {
        return Value::unknown();
    }
    if language == Language::Make {
        let recipes = make_recipes(code.text);
        let shell_code = Code {
            text: &recipes,
            ..*code
        };
        return analyze(flow, scope, &shell_code, Language::Shell);
    }
    // tree-sitter-bash's scanner crashes on some characters past ASCII (a Tag-block character
    // after `${`, found by tests/safety.rs's random texts): the shell is given them as `_`,
    // byte for byte, so positions and lines stay; the line pass reads the real characters.
    if language == Language::Shell && !code.text.is_ascii() {
        let ascii: String = code
            .text
            .chars()
            .flat_map(|c| {
                let width = if c.is_ascii() { 1 } else { c.len_utf8() };
                std::iter::repeat_n(if c.is_ascii() { c } else { '_' }, width)
            })
            .collect();
        return analyze(
            flow,
            scope,
            &Code {
                text: &ascii,
                ..*code
            },
            language,
        );
    }
    let Some(tree) = parse(language, code.text) else {
        return Value::unknown();
    };
    let outer_checks = flow.checks_containment;
    flow.checks_containment = checks_containment(code.text);
    let printed = match language {
        Language::Shell | Language::Make => shell::walk(flow, scope, code, tree.root_node()),
        Language::Python => python::walk(flow, scope, code, tree.root_node()),
        Language::JavaScript | Language::TypeScript => {
            javascript::walk(flow, scope, code, tree.root_node())
        }
    };
    flow.checks_containment = outer_checks;
    printed
}

/// Whether code checks that a path it built stays inside a folder, as a careful extractor or
/// file server does before it writes or opens the path.
fn checks_containment(text: &str) -> bool {
    const CHECKS: &[&str] = &[
        "path.relative(",
        "is_relative_to(",
        "relative_to(",
        "commonpath(",
        "commonprefix(",
        "realpath -m",
        "--no-absolute-filenames",
        // `target.startsWith(dest + path.sep)`
        "path.sep)",
    ];
    CHECKS.iter().any(|check| text.contains(check))
        || (text.contains(".startswith(") && text.contains("realpath("))
}

/// Code found inside code (a here-document fed to `python3`, the text of `bash -c`): parsed
/// as `language`, in a scope of its own (it runs as another process), numbered from `at_line`.
fn analyze_nested(
    flow: &mut Flow,
    outer: &Code,
    language: Language,
    text: &str,
    at_line: usize,
) -> Value {
    let mut scope = Scope::default();
    analyze(
        flow,
        &mut scope,
        &Code {
            file: outer.file,
            text,
            first_line: at_line,
            depth: outer.depth + 1,
        },
        language,
    )
}

/// A command string handed to a shell (`os.system`, `exec`, `shell=True`): a finding when it
/// is built from data, and read as shell when its text is known. Returns what it prints.
fn shell_string(flow: &mut Flow, outer: &Code, command: &Value, at: &Place) -> Value {
    flow.run_shell(command, at);
    let mut output = command.derived();
    if let Some(text) = command.consts.first() {
        output.absorb(&analyze_nested(flow, outer, Language::Shell, text, at.line));
    }
    output
}

/// A Makefile as the shell its recipes run, line for line (other lines blank, so numbers stay):
/// a recipe line starts with a tab; `@` and `-` before it and `$$` are Make's, not the shell's.
fn make_recipes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if let Some(recipe) = line.strip_prefix('\t') {
            let recipe = recipe.trim_start_matches(['@', '-', '+']);
            out.push_str(&recipe.replace("$$", "$"));
        }
        out.push('\n');
    }
    out
}

/// The text of a string literal without its quotes, for the walkers.
fn unquote(text: &str) -> &str {
    let text = text.trim();
    for quote in ["'''", "\"\"\"", "'", "\"", "`"] {
        if let Some(inner) = text.strip_prefix(quote).and_then(|t| t.strip_suffix(quote)) {
            return inner;
        }
    }
    text
}

#[cfg(test)]
mod tests;
