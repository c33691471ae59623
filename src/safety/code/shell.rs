//! Shell: commands, their words, pipes, redirects and here-documents, as `flow` operations.
//! A command's words are evaluated (variables filled in when known), so `rm -rf "$T"` with
//! `T=$HOME` is read as what it does.

use std::collections::HashMap;

use tree_sitter::Node;

use super::flow::{normalize_path, Flow, Hit};
use super::value::{Object, Place, Source, Value};
use super::{analyze_nested, unquote, Code, Language, Scope};
use crate::safety::{Category, Risk};

pub(super) fn walk(flow: &mut Flow, scope: &mut Scope, code: &Code, root: Node) -> Value {
    let mut walker = Walker {
        flow,
        scope,
        code,
        functions: HashMap::new(),
        calls: 0,
    };
    walker.statements(root, &Value::unknown())
}

/// A program started with an argument vector (`subprocess.run([...])`, `spawn(cmd, [...])`):
/// the same command, without a shell in between.
pub(super) fn run_argv(flow: &mut Flow, code: &Code, argv: &[Value], at: &Place) -> Value {
    let mut scope = Scope::default();
    let mut walker = Walker {
        flow,
        scope: &mut scope,
        code,
        functions: HashMap::new(),
        calls: 0,
    };
    if let Some(program) = argv.first() {
        let data = walker.flow.read_path(program, at);
        walker
            .flow
            .run_code(&data.derived_if_tainted(), "a program", at);
    }
    let (name, args) = strip_wrappers(argv.to_vec());
    let words: Option<Vec<&String>> = args.iter().map(|a| a.consts.first()).collect();
    if let (false, Some(words)) = (name.is_empty(), words) {
        let text = std::iter::once(&name)
            .chain(words)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ");
        walker.flow.recheck(&text, "as the command it runs", at);
    }
    walker.run(&name, &args, &Value::unknown(), None, at)
}

struct Walker<'f, 's, 'c, 't> {
    flow: &'f mut Flow,
    scope: &'s mut Scope,
    code: &'c Code<'c>,
    /// The functions defined so far, by name: a call runs its body with its arguments.
    functions: HashMap<String, Node<'t>>,
    /// How deep calls of defined functions are followed.
    calls: usize,
}

/// How deep calls of a skill's own functions are followed.
const MAX_CALL_DEPTH: usize = 3;

/// `printf`'s backslash escapes in `text` (`\x73`, `\163`, `\n`), as it prints them.
fn printf_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let number = |radix: u32, max: usize, chars: &mut std::iter::Peekable<std::str::Chars>| {
            let mut digits = String::new();
            while digits.len() < max && chars.peek().is_some_and(|d| d.is_digit(radix)) {
                digits.extend(chars.next());
            }
            u32::from_str_radix(&digits, radix)
                .ok()
                .and_then(char::from_u32)
        };
        let spelled = match chars.peek().copied() {
            Some('x') => {
                chars.next();
                number(16, 2, &mut chars)
            }
            Some('0'..='7') => number(8, 4, &mut chars),
            Some('n') => chars.next().map(|_| '\n'),
            Some('t') => chars.next().map(|_| '\t'),
            Some('\\') => chars.next(),
            _ => Some('\\'),
        };
        out.extend(spelled);
    }
    out
}

/// The names of files in a folder: whoever put a file there chose its name (`a;rm -rf ~;.jpg`).
fn file_names(at: &Place) -> super::value::Origin {
    super::value::Origin {
        source: Source::Input,
        what: "file names in a folder (whoever put the files there chose them)".into(),
        at: at.clone(),
    }
}

/// Whether `git …` prints text that whoever can push to the shared repository chose: branch
/// and tag names, commit messages. A shell command built from it runs what they wrote.
fn prints_names_others_choose(flags: &[&str]) -> bool {
    let has = |word: &str| flags.contains(&word);
    has("ls-remote")
        || has("for-each-ref")
        || (has("branch") && (has("-r") || has("-a") || has("--remotes") || has("--all")))
        || (has("log") && flags.iter().any(|f| f.contains("%s") || f.contains("%b")))
}

/// The archive a command unpacks and the folder it unpacks into (`unzip a.zip -d out`,
/// `tar xzf a.tgz -C out`, `7z x a.7z -oout`): what was in the archive is then in that folder.
fn archive_extracted(base: &str, args: &[Value]) -> Option<(Value, Value)> {
    let word = |index: usize| {
        args.get(index)
            .and_then(|a| a.consts.first())
            .map_or("", String::as_str)
    };
    let mut archive = None;
    let mut folder = Value::literal(".");
    let mut extracting = base == "unzip" || (base.starts_with("7z") && word(0) == "x");
    let mut index = usize::from(base.starts_with("7z"));
    while index < args.len() {
        let current = word(index);
        let next = args.get(index + 1).cloned();
        index += 1;
        match (base, current) {
            ("unzip", "-d") | ("tar" | "bsdtar", "-C" | "--directory") => {
                folder = next.unwrap_or_default();
                index += 1;
            }
            ("unzip", "-P") => index += 1,
            (_, flag) if base.starts_with("7z") && flag.starts_with("-o") => {
                folder = Value::literal(&flag[2..]);
            }
            ("tar" | "bsdtar", flag)
                if (flag.starts_with('-') && !flag.starts_with("--")) || index == 1 =>
            {
                extracting |= flag.contains('x');
                if flag.contains('f') && archive.is_none() {
                    archive = next;
                    index += 1;
                }
            }
            (_, flag) if flag.starts_with('-') => {}
            _ if archive.is_none() => archive = Some(args[index - 1].clone()),
            _ => {}
        }
    }
    let folder = Value::concat(&[folder, Value::literal("/")]);
    Some((archive?, folder)).filter(|_| extracting)
}

/// An archive a command creates, and the paths it packs into it (`tar czf out.tgz -C /tmp
/// dir`, `zip -r out.zip dir`, `7z a out.7z dir`): what is in those paths is then in the archive.
fn archive_created(base: &str, args: &[Value]) -> Option<(Value, Vec<Value>)> {
    let word = |index: usize| {
        args.get(index)
            .and_then(|a| a.consts.first())
            .map_or("", String::as_str)
    };
    let tar = base == "tar";
    // zip's first word is the archive; 7z's is its command, then the archive.
    let mut creating = base == "zip" || (base.starts_with("7z") && word(0) == "a");
    let mut index = usize::from(base.starts_with("7z"));
    let mut archive = None;
    let mut folder: Option<Value> = None;
    let mut members = Vec::new();
    while index < args.len() {
        let current = word(index);
        let next = args.get(index + 1).cloned();
        index += 1;
        if tar && current == "-C" {
            folder = next;
            index += 1;
        } else if tar && (current.starts_with('-') && !current.starts_with("--") || index == 1) {
            // `czf`, `-czf`: `c` creates, and `f` takes the archive as the next word.
            creating |= current.contains('c');
            if current.contains('f') && archive.is_none() {
                archive = next;
                index += 1;
            }
        } else if current == "--create" {
            creating = true;
        } else if let Some(file) = current.strip_prefix("--file=") {
            archive = Some(Value::literal(file));
        } else if current.starts_with('-') {
            continue;
        } else if archive.is_none() && !tar {
            archive = Some(args[index - 1].clone());
        } else {
            let member = args[index - 1].clone();
            members.push(match &folder {
                Some(folder) => Value::concat(&[folder.clone(), Value::literal("/"), member]),
                None => member,
            });
        }
    }
    Some((archive?, members)).filter(|_| creating)
}

/// Commands that print what they read, so their output carries their input's origins.
const FILTERS: &[&str] = &[
    "cat", "head", "tail", "less", "more", "strings", "jq", "yq", "sed", "awk", "cut", "tr",
    "sort", "uniq", "tac", "grep", "egrep", "zcat", "gunzip", "gzip", "bzip2", "xz", "tar", "zip",
    "7z", "openssl", "gpg", "column", "paste", "fold", "iconv", "python", "xargs", "tee", "dd",
    "sqlite3",
];
/// Commands that print a secret (a keyring, a CLI's token) on their own.
const SECRET_PRINTERS: &[(&str, &str)] = &[
    ("secret-tool", "lookup"),
    ("security", "find-generic-password"),
    ("security", "find-internet-password"),
    ("security", "dump-keychain"),
    ("gh", "auth"),
    ("aws", "configure"),
    ("gcloud", "auth"),
    ("az", "account"),
    ("pass", "show"),
    ("op", "read"),
    ("bw", "get"),
    ("keyring", "get"),
    ("vault", "read"),
];
/// Commands that look a name up in DNS: a secret in the name leaves with the query.
const RESOLVERS: &[&str] = &["dig", "nslookup", "host", "drill", "ping", "resolvectl"];
/// Commands that connect to another machine and send what they are given.
const SENDERS: &[&str] = &[
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "ssh",
    "sftp",
    "ftp",
    "mail",
    "sendmail",
    "mutt",
    "smbclient",
];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "fish"];
const INTERPRETERS: &[&str] = &[
    "python", "python3", "python2", "node", "nodejs", "perl", "ruby", "php", "deno", "bun",
];

impl<'t> Walker<'_, '_, '_, 't> {
    fn place(&self, node: Node) -> Place {
        self.code.place(node)
    }

    fn text(&self, node: Node) -> &str {
        self.code.text_of(node)
    }

    /// Runs every statement under `node`; returns the output of the last one.
    /// Runs every statement under `node`; returns what they print: the last one's text, and
    /// the origins of all (`{ cat a; cat b; } > f` puts both in `f`).
    fn statements(&mut self, node: Node<'t>, stdin: &Value) -> Value {
        let mut printed = Value::unknown();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            let output = self.statement(child, stdin);
            let earlier = std::mem::replace(&mut printed, output);
            printed.absorb(&earlier);
        }
        printed
    }

    fn statement(&mut self, node: Node<'t>, stdin: &Value) -> Value {
        match node.kind() {
            "command" => self.command_with_heredoc(node, stdin, None),
            "pipeline" => self.pipeline(node, stdin),
            "redirected_statement" => self.redirected(node, stdin),
            "variable_assignment" => {
                self.assignment(node, false);
                Value::unknown()
            }
            "variable_assignments" | "declaration_command" => {
                let exported = self.text(node).trim_start().starts_with("export");
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    if child.kind() == "variable_assignment" {
                        self.assignment(child, exported);
                    } else if exported {
                        let name = self.text(child).to_string();
                        if let Some(value) = self.scope.vars.get(&name).cloned() {
                            self.flow.exported.insert(name, value);
                        }
                    }
                }
                Value::unknown()
            }
            "function_definition" => {
                self.function(node);
                Value::unknown()
            }
            "while_statement" | "until_statement" => {
                self.endless_loop(node);
                self.statements(node, stdin)
            }
            "for_statement" => self.for_loop(node, stdin),
            "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" => Value::unknown(),
            "negated_command"
            | "list"
            | "subshell"
            | "compound_statement"
            | "do_group"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "case_statement"
            | "case_item"
            | "c_style_for_statement"
            | "program" => self.statements(node, stdin),
            "test_command" => {
                self.words(node);
                Value::unknown()
            }
            _ => {
                self.word(node);
                Value::unknown()
            }
        }
    }

    fn assignment(&mut self, node: Node<'t>, exported: bool) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = self.text(name).to_string();
        let value = node
            .child_by_field_name("value")
            .map_or_else(|| Value::literal(""), |v| self.word(v));
        if exported {
            self.flow.exported.insert(name.clone(), value.clone());
        }
        self.scope.vars.insert(name, value);
    }

    fn pipeline(&mut self, node: Node<'t>, stdin: &Value) -> Value {
        let mut data = stdin.clone();
        let mut cursor = node.walk();
        let stages: Vec<Node> = node.named_children(&mut cursor).collect();
        let mut listed_home: Option<Place> = None;
        for stage in stages {
            let text = self.text(stage).to_string();
            if let Some(at) = &listed_home {
                if deletes(&text) {
                    let at = at.clone();
                    self.flow.emit(
                        &self.place(stage),
                        Hit {
                            rule: "destructive.listed-and-deleted",
                            category: Category::Destructive,
                            risk: Risk::Critical,
                            message: format!("lists the home folder (line {}) and deletes what the list names, which is everything in it: delete the step; remove only named paths inside the project", at.line),
                            source: Some(at),
                        },
                    );
                }
            }
            if listed_home.is_none() && self.lists_home(stage) {
                listed_home = Some(self.place(stage));
            }
            data = self.statement(stage, &data);
        }
        data
    }

    /// Whether `stage` lists the home folder or the root (`ls -A ~`, `find "$HOME" -maxdepth 1`).
    fn lists_home(&mut self, stage: Node<'t>) -> bool {
        if stage.kind() != "command" {
            return false;
        }
        let (name, args) = self.command_words(stage);
        matches!(name.as_str(), "ls" | "find" | "du")
            && args
                .iter()
                .any(|a| a.consts.iter().any(|c| is_everything(&normalize_path(c))))
    }

    fn redirected(&mut self, node: Node<'t>, stdin: &Value) -> Value {
        let mut stdin = stdin.clone();
        let mut writes = Vec::new();
        let mut cursor = node.walk();
        let redirects: Vec<Node> = node
            .children_by_field_name("redirect", &mut cursor)
            .collect();
        let mut heredoc_text = None;
        for redirect in &redirects {
            match redirect.kind() {
                "heredoc_redirect" => {
                    let body = named_child_of_kind(*redirect, "heredoc_body");
                    let text = body.map_or(String::new(), |b| self.text(b).to_string());
                    let line = body.map_or(0, |b| self.place(b).line);
                    // `<<EOF` fills in variables; `<<'EOF'` keeps the text as written.
                    let quoted = named_child_of_kind(*redirect, "heredoc_start")
                        .is_some_and(|start| self.text(start).contains(['\'', '"', '\\']));
                    stdin = match body {
                        Some(body) if !quoted => self.with_gaps(body),
                        _ => Value::literal(text.clone()),
                    };
                    heredoc_text = Some((text, line));
                }
                "herestring_redirect" => {
                    let mut c = redirect.walk();
                    let parts: Vec<Node> = redirect.named_children(&mut c).collect();
                    stdin = Value::concat(&parts.iter().map(|p| self.word(*p)).collect::<Vec<_>>());
                }
                "file_redirect" => {
                    let operator = redirect
                        .child(0)
                        .map(|c| self.text(c).to_string())
                        .unwrap_or_default();
                    let operator = if operator.chars().all(|c| c.is_ascii_digit()) {
                        redirect
                            .child(1)
                            .map(|c| self.text(c).to_string())
                            .unwrap_or_default()
                    } else {
                        operator
                    };
                    let Some(destination) = redirect.child_by_field_name("destination") else {
                        continue;
                    };
                    let target = self.word(destination);
                    if operator.starts_with('<') && destination.kind() == "process_substitution" {
                        // `< <(cat a b)`: the input is what the command prints.
                        stdin = target;
                    } else if operator.starts_with('<') {
                        stdin = self.flow.read_path(&target, &self.place(*redirect));
                        self.reads_device_forever(&target, node);
                    } else if !operator.contains('&') || operator == "&>" || operator == "&>>" {
                        writes.push((target, operator.contains(">>")));
                    }
                }
                _ => {}
            }
        }
        let Some(body) = node.child_by_field_name("body") else {
            return Value::unknown();
        };
        let output = if body.kind() == "command" {
            let heredoc = heredoc_text.as_ref().map(|(t, l)| (t.as_str(), *l));
            self.command_with_heredoc(body, &stdin, heredoc)
        } else {
            self.statement(body, &stdin)
        };
        let at = self.place(node);
        for (target, append) in writes {
            self.write(&target, &output, append, &at);
            if output.object == Object::Plain && is_endless_output(self.text(body)) {
                self.disk_fill(&at);
            }
        }
        output
    }

    fn write(&mut self, target: &Value, data: &Value, append: bool, at: &Place) {
        if target
            .consts
            .iter()
            .any(|t| t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/"))
        {
            self.flow.send("a /dev/tcp connection", &[data], at);
            return;
        }
        self.flow.write_path(target, data, append, at);
        // A unit file's command runs later, as the person: read it as shell.
        for text in &data.consts {
            for line in text.lines() {
                if let Some(command) = line.trim().strip_prefix("ExecStart=") {
                    let command = command.replace("%h", "$HOME");
                    analyze_nested(self.flow, self.code, Language::Shell, &command, at.line);
                }
            }
        }
    }

    /// The command's name (wrappers like `sudo` and `env X=Y` removed) and its arguments.
    fn command_words(&mut self, node: Node<'t>) -> (String, Vec<Value>) {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => self.assignment(child, true),
                "file_redirect" | "herestring_redirect" => {}
                "command_name" => {
                    let value = match child.named_child(0) {
                        Some(inner) => self.word(inner),
                        None => Value::literal(self.text(child)),
                    };
                    words.push(value);
                }
                _ => words.push(self.word(child)),
            }
        }
        strip_wrappers(words)
    }

    /// `TOKEN="$(gh auth token)" npx --yes tool@latest`: a key in the environment of code a
    /// launcher fetches as it runs, which reads it and does with it what it likes.
    fn secret_to_fetched_program(
        &mut self,
        node: Node<'t>,
        name: &str,
        args: &[Value],
        at: &Place,
    ) {
        let words: Vec<&str> = args
            .iter()
            .filter_map(|a| a.consts.first().map(String::as_str))
            .collect();
        let fetches = match name.rsplit('/').next().unwrap_or(name) {
            "npx" | "bunx" | "uvx" => true,
            "pnpm" | "yarn" => words.first() == Some(&"dlx"),
            "pipx" => words.first() == Some(&"run"),
            _ => false,
        };
        if !fetches {
            return;
        }
        let mut cursor = node.walk();
        let secret = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "variable_assignment")
            .filter_map(|c| c.child_by_field_name("name"))
            .find_map(|n| {
                let variable = self.text(n).to_string();
                self.flow
                    .exported
                    .get(&variable)
                    .and_then(|v| v.origin(Source::Secret))
                    .cloned()
            });
        if let Some(origin) = secret {
            self.flow.emit(
                at,
                Hit {
                    rule: "exfiltration.secret-to-fetched-code",
                    category: Category::Exfiltration,
                    risk: Risk::High,
                    message: format!("puts {} (line {}) in the environment of `{name}`, which fetches a package and runs it as it is published today: that code can send the key anywhere; pin a version you checked, and pass it no keys", origin.what, origin.at.line),
                    source: Some(origin.at.clone()),
                },
            );
        }
    }

    fn command_with_heredoc(
        &mut self,
        node: Node<'t>,
        stdin: &Value,
        heredoc: Option<(&str, usize)>,
    ) -> Value {
        let (name, args) = self.command_words(node);
        let at = self.place(node);
        if let Some(text) = resolved_text(&name, &args) {
            // Only text the line rules have not seen as written.
            let written: Vec<&str> = self
                .text(node)
                .split_whitespace()
                .map(unquote_word)
                .collect();
            if text.split_whitespace().ne(written.iter().copied()) {
                self.flow
                    .recheck(&text, "with its variables filled in", &at);
            }
        }
        if let Some(body) = self.functions.get(&name).copied() {
            let all = Value::concat(&args);
            return self.call_function(body, &args, &all);
        }
        let output = self.run(&name, &args, stdin, heredoc, &at);
        // A command named by a variable runs whatever the variable holds; `"$@"` is a
        // wrapper's own idiom, the command its caller gave.
        if let Some(first) = args.first().filter(|_| name.is_empty()) {
            let callers_command = !first.taint.is_empty()
                && first
                    .taint
                    .iter()
                    .all(|o| o.what.starts_with("the script's argument"));
            if !first.taint.is_empty() && !callers_command {
                self.flow.run_code(first, "a command", &at);
            }
        }
        self.secret_to_fetched_program(node, &name, &args, &at);
        output
    }

    /// What one command does.
    fn run(
        &mut self,
        name: &str,
        args: &[Value],
        stdin: &Value,
        heredoc: Option<(&str, usize)>,
        at: &Place,
    ) -> Value {
        let flags: Vec<&str> = args
            .iter()
            .filter_map(|a| a.consts.first().map(String::as_str))
            .collect();
        let has = |flag: &str| flags.contains(&flag);
        let mut output = stdin.derived();
        for arg in args {
            output.absorb(arg);
        }
        let base = name.rsplit('/').next().unwrap_or(name);
        match base {
            "curl" | "wget" | "http" | "https" | "aria2c" | "xh" => {
                return self.http(base, args, stdin, at);
            }
            "cp" | "mv" | "install" | "rsync" | "scp" if args.len() >= 2 => {
                let paths: Vec<&Value> = args.iter().filter(|a| !is_flag(a)).collect();
                if let Some((destination, sources)) = paths.split_last() {
                    let mut data = Value::unknown();
                    for source in sources {
                        data.absorb(&self.read_any(source, at));
                    }
                    if destination.consts.iter().any(|d| is_remote(d)) {
                        self.flow
                            .send(&format!("`{base}` to another machine"), &[&data], at);
                    } else {
                        self.flow.copy(&data, destination, at);
                    }
                }
                return Value::unknown();
            }
            "tar" | "unzip" | "7z" | "7za" | "bsdtar"
                if archive_extracted(base, args).is_some() =>
            {
                if let Some((archive, folder)) = archive_extracted(base, args) {
                    let data = self.flow.read_path(&archive, at);
                    self.flow.copy(&data, &folder, at);
                }
                return Value::unknown();
            }
            "tar" | "zip" | "7z" | "7za" => {
                if let Some((archive, members)) = archive_created(base, args) {
                    let mut data = Value::unknown();
                    for member in &members {
                        data.absorb(&self.read_any(member, at));
                    }
                    self.flow.copy(&data, &archive, at);
                    return Value::unknown();
                }
            }
            "sha256sum" | "sha512sum" | "shasum" | "b2sum" if has("-c") || has("--check") => {
                // Each line checked is `<hash>  <file>`, from stdin or the files named.
                let listing = self.input_of(args, stdin, at);
                for text in &listing.consts {
                    for line in text.lines() {
                        if let Some(file) = line.split_whitespace().nth(1) {
                            self.flow
                                .verified(&Value::literal(file.trim_start_matches('*')));
                        }
                    }
                }
                return Value::unknown();
            }
            "gpg" | "gpgv" | "minisign" | "cosign" | "signify"
                if has("--verify") || has("-V") || has("verify-blob") =>
            {
                for file in args.iter().filter(|a| !is_flag(a)) {
                    self.flow.verified(file);
                }
                return Value::unknown();
            }
            "tee" => {
                for target in args.iter().filter(|a| !is_flag(a)) {
                    self.write(target, stdin, has("-a"), at);
                }
                return stdin.clone();
            }
            "echo" | "printf" => {
                let mut parts = Vec::new();
                for (index, arg) in args.iter().enumerate() {
                    if index > 0 {
                        parts.push(Value::literal(" "));
                    }
                    parts.push(arg.clone());
                }
                let printed = Value::concat(&parts);
                if base == "printf" {
                    // `$(printf '\x73\x68')` spells `sh`: a lone format is known text.
                    if let ([format], true) = (args, printed.literal) {
                        if let Some(text) = format.consts.first().filter(|t| !t.contains('%')) {
                            let spelled = printf_escapes(text);
                            if spelled != *text {
                                return Value {
                                    literal: false,
                                    ..Value::literal(spelled)
                                }
                                .tainted(decoded(at));
                            }
                            return Value::literal(spelled);
                        }
                    }
                    return printed.derived();
                }
                return printed;
            }
            "env" | "printenv" | "set" | "export" | "declare" if args.is_empty() => {
                return Value::from_source(Source::Secret, "the whole environment", at);
            }
            // Each `mktemp` is a file of its own, known by where it was made.
            "mktemp" => {
                return Value::literal(format!("/tmp/mktemp-{}-{}", at.file, at.line));
            }
            "pbpaste" | "wl-paste" | "xsel" => {
                return Value::from_source(Source::Secret, "the clipboard", at);
            }
            "xclip" if has("-o") || flags.iter().any(|f| f.starts_with("-out")) => {
                return Value::from_source(Source::Secret, "the clipboard", at);
            }
            "git" if flags.iter().any(|f| f.ends_with("credential.helper")) => {
                self.credential_helper(args, at);
                return Value::unknown();
            }
            "git" if prints_names_others_choose(&flags) => {
                return output.tainted(super::value::Origin {
                    source: Source::Input,
                    what: format!("names others choose (`{base} {}`)", flags.join(" ")),
                    at: at.clone(),
                });
            }
            "ls" | "fd" => return output.tainted(file_names(at)),
            "read" => {
                for arg in args.iter().filter(|a| !is_flag(a)) {
                    if let Some(var) = arg.consts.first() {
                        // What it reads is its input: a file redirected into the loop
                        // (`while read k v; do …; done < .env`), or what a person types.
                        let mut line = Value::from_source(Source::Input, "what `read` takes", at);
                        line.absorb(stdin);
                        self.scope.vars.insert(var.clone(), line);
                    }
                }
                return Value::unknown();
            }
            "eval" => {
                let code = Value::concat(args);
                self.flow.run_code(&code, "shell", at);
                self.nested_text(Language::Shell, &code, at);
                return Value::unknown();
            }
            "source" | "." => {
                if let Some(file) = args.first() {
                    let data = self.flow.read_path(file, at);
                    self.flow.run_code(&data.derived_if_tainted(), "shell", at);
                }
                return Value::unknown();
            }
            "base64" | "xxd" | "od" | "basenc" | "base32" | "uuencode" | "hexdump" => {
                let decode = has("-d") || has("--decode") || has("-D") || has("-r");
                let input = self.input_of(args, stdin, at);
                if decode {
                    return input.derived().tainted(decoded(at));
                }
                return self.flow.encode(&input, base, at);
            }
            "rev" => return stdin.derived().tainted(decoded(at)),
            "tr" if flags
                .iter()
                .any(|f| f.contains("N-ZA-M") || f.contains("n-za-m")) =>
            {
                return stdin.derived().tainted(decoded(at));
            }
            // `crontab -` or `crontab FILE` replaces the schedule; `-l` lists it, `-e` is by hand.
            "crontab" if !flags.iter().any(|f| matches!(*f, "-l" | "-e" | "-r")) => {
                let file = args
                    .iter()
                    .find(|a| !is_flag(a) || a.consts.first().is_some_and(|c| c == "-"));
                let data = match file {
                    Some(file) if file.consts.first().is_some_and(|c| c != "-") => {
                        let mut data = self.flow.read_path(file, at);
                        data.absorb(file);
                        data
                    }
                    _ => stdin.clone(),
                };
                self.flow.write_path(
                    &Value::literal("/var/spool/cron/crontabs/me"),
                    &data,
                    false,
                    at,
                );
                return Value::unknown();
            }
            "yes" => return Value::unknown(),
            "dd" => {
                let infinite = flags.iter().any(|f| {
                    *f == "if=/dev/zero" || *f == "if=/dev/urandom" || *f == "if=/dev/random"
                });
                if infinite && !flags.iter().any(|f| f.starts_with("count=")) {
                    self.disk_fill(at);
                }
                return output;
            }
            "fallocate" | "truncate" => {
                if flags.iter().any(|f| huge_size(f)) {
                    self.disk_fill(at);
                }
                return Value::unknown();
            }
            "find" => {
                self.find(args, at);
                return output.tainted(file_names(at));
            }
            "awk" | "gawk" | "mawk" | "busybox"
                if args
                    .iter()
                    .any(|a| a.consts.iter().any(|c| c.contains("system("))) =>
            {
                let program = args
                    .iter()
                    .flat_map(|a| a.consts.iter())
                    .find(|c| c.contains("system("))
                    .cloned()
                    .unwrap_or_default();
                self.flow.recheck(
                    &program.replace("\\\"", "").replace('"', ""),
                    "in the awk program's system()",
                    at,
                );
                if !stdin.taint.is_empty() {
                    self.flow.run_shell(&stdin.derived(), at);
                }
                return Value::unknown();
            }
            "sqlite3" | "psql" | "mysql" | "duckdb" | "clickhouse-client" => {
                for arg in args.iter().skip(1) {
                    self.flow.query(arg, at);
                }
                self.flow.query(stdin, at);
                return output;
            }
            _ => {}
        }
        if RESOLVERS.contains(&base) {
            self.flow.send(
                &format!("a DNS look-up (`{base}`)"),
                &args.iter().collect::<Vec<_>>(),
                at,
            );
            return Value::unknown();
        }
        if SENDERS.contains(&base) {
            let mut data: Vec<&Value> = args.iter().collect();
            data.push(stdin);
            self.flow.send(&format!("`{base}`"), &data, at);
            return Value::unknown();
        }
        if matches!(base, "gh" | "glab")
            && matches!(flags.first().copied(), Some("issue" | "pr" | "mr"))
            && flags
                .iter()
                .any(|f| matches!(*f, "create" | "comment" | "edit"))
        {
            // An issue, a pull request or a comment is public text, often on another's
            // project: its words go out, and so does a `--body-file`.
            let mut sent = Vec::new();
            for (index, arg) in args.iter().enumerate() {
                let after_file_flag = index > 0
                    && matches!(flags.get(index - 1).copied(), Some("--body-file" | "-F"));
                sent.push(if after_file_flag {
                    self.flow.read_path(arg, at)
                } else {
                    arg.clone()
                });
            }
            self.flow.send(
                &format!("`{base} {}`", flags[0]),
                &sent.iter().collect::<Vec<_>>(),
                at,
            );
            return Value::unknown();
        }
        if let Some(publisher) = publish_command(base, &flags) {
            self.flow.publish(&publisher, at);
            let data: Vec<Value> = args
                .iter()
                .filter(|a| !is_flag(a))
                .map(|a| self.read_any(a, at))
                .collect();
            self.flow
                .send(&publisher, &data.iter().collect::<Vec<_>>(), at);
            return Value::unknown();
        }
        if let Some(service) = remote_text_command(base, &flags) {
            return Value::from_source(Source::Network, service, at);
        }
        if SECRET_PRINTERS
            .iter()
            .any(|(program, sub)| base == *program && flags.first() == Some(sub))
        {
            return Value::from_source(Source::Secret, format!("`{base} {}`", flags.join(" ")), at);
        }
        if SHELLS.contains(&base) || INTERPRETERS.contains(&base) {
            return self.interpreter(base, args, stdin, heredoc, at);
        }
        if base == "xargs" {
            let rest: Vec<Value> = args.iter().skip_while(|a| is_flag(a)).cloned().collect();
            if let Some(first) = rest.first().and_then(|v| v.consts.first()).cloned() {
                let mut with_input = rest[1..].to_vec();
                with_input.push(stdin.clone());
                return self.run(&first, &with_input, &Value::unknown(), None, at);
            }
        }
        if base == "cat" && args.is_empty() {
            return stdin.clone();
        }
        if FILTERS.contains(&base) {
            for arg in args.iter().filter(|a| !is_flag(a)) {
                output.absorb(&self.flow.read_path(arg, at));
            }
            if base == "grep" && (has("-q") || has("-c") || has("-l")) {
                return Value::unknown();
            }
            return output;
        }
        // A program the skill runs by its path: a file an earlier step downloaded runs here.
        if name.contains('/') {
            let data = self.flow.read_path(&Value::literal(name), at);
            self.flow
                .run_code(&data.derived_if_tainted(), "a program", at);
        }
        output
    }

    /// `git config credential.helper '!…'`: a script of the skill's is handed every password git
    /// uses from now on; the script itself is read as shell.
    fn credential_helper(&mut self, args: &[Value], at: &Place) {
        let Some(helper) = args
            .iter()
            .skip_while(|a| !a.consts.iter().any(|c| c.ends_with("credential.helper")))
            .nth(1)
        else {
            return;
        };
        let script = helper.consts.first().and_then(|h| h.strip_prefix('!'));
        if let Some(script) = script {
            analyze_nested(self.flow, self.code, Language::Shell, script, at.line);
        }
        let known = helper.consts.first().is_some_and(|h| {
            matches!(
                h.as_str(),
                "store"
                    | "cache"
                    | "osxkeychain"
                    | "manager"
                    | "manager-core"
                    | "libsecret"
                    | "wincred"
                    | ""
            ) || h.starts_with("cache ")
        });
        if !known {
            self.flow.emit(
                at,
                Hit {
                    rule: "credentials.git-helper",
                    category: Category::Credentials,
                    risk: Risk::High,
                    message: "makes a program of the skill's git's credential helper, which is handed every user name and password git uses from now on: keep the person's own helper (`store`, `cache`, the system keychain)".into(),
                    source: None,
                },
            );
        }
    }

    /// `curl`, `wget` and their kin: a fetch (its output, or the file it saves), and a send of
    /// whatever data they carry.
    fn http(&mut self, base: &str, args: &[Value], stdin: &Value, at: &Place) -> Value {
        let mut url = String::new();
        let mut sent: Vec<Value> = Vec::new();
        let mut saved_to: Option<Value> = None;
        let mut iter = args.iter().peekable();
        while let Some(arg) = iter.next() {
            let flag = arg.consts.first().cloned().unwrap_or_default();
            let takes_data = matches!(
                flag.as_str(),
                "-d" | "--data"
                    | "--data-binary"
                    | "--data-raw"
                    | "--data-urlencode"
                    | "-F"
                    | "--form"
                    | "-T"
                    | "--upload-file"
                    | "--post-data"
                    | "--post-file"
                    | "--body-data"
                    | "--body-file"
                    | "--json"
            ) || flag.starts_with("--data=")
                || flag.starts_with("--post-data=")
                || flag.starts_with("--post-file=");
            let saves = matches!(
                flag.as_str(),
                "-o" | "-O" | "--output" | "--output-document"
            );
            if takes_data || saves {
                let value = if flag.contains('=') {
                    Value::literal(flag.split_once('=').map_or("", |(_, v)| v))
                } else {
                    match iter.next() {
                        Some(v) => v.clone(),
                        None => continue,
                    }
                };
                if saves {
                    if flag == "-O" && base == "curl" {
                        saved_to = Some(Value::unknown());
                        url_word(&mut url, &value);
                    } else {
                        saved_to = Some(value);
                    }
                    continue;
                }
                let file_or_stdin = |value: &Value| -> Option<String> {
                    value.consts.iter().find_map(|c| {
                        // `-F name=@file;type=…`, `-d @file`, `-T file`
                        // `=<file` sends the file's text as the field's value.
                        let file = c
                            .rsplit_once("=@")
                            .or_else(|| c.rsplit_once("=<"))
                            .map(|(_, f)| f)
                            .or_else(|| c.strip_prefix('@'))
                            .map(|f| f.split(';').next().unwrap_or(f));
                        file.map(str::to_string).or_else(|| {
                            (flag == "-T" || flag == "--upload-file" || flag.contains("-file"))
                                .then(|| c.to_string())
                        })
                    })
                };
                match file_or_stdin(&value) {
                    Some(file) if file == "-" => sent.push(stdin.clone()),
                    Some(file) => sent.push(self.flow.read_path(&Value::literal(file), at)),
                    None => sent.push(value),
                }
                continue;
            }
            if takes_value(&flag) {
                // A header or a user is how a token is meant to be sent, not a leak.
                iter.next();
                continue;
            }
            if !is_flag(arg) {
                if arg
                    .consts
                    .iter()
                    .any(|c| c.contains("://") || c.contains('.'))
                {
                    url_word(&mut url, arg);
                }
                // A secret in the address leaves in the request line.
                sent.push(arg.clone());
            }
        }
        if stdin.origin(Source::Secret).is_some() && sent.is_empty() {
            sent.push(stdin.clone());
        }
        self.flow
            .send(&format!("`{base}`"), &sent.iter().collect::<Vec<_>>(), at);
        let what = if url.is_empty() {
            "a URL".to_string()
        } else {
            url
        };
        let fetched = Value::from_source(Source::Network, what, at);
        if let Some(file) = saved_to {
            self.flow.write_path(&file, &fetched, false, at);
            return Value::unknown();
        }
        fetched
    }

    /// `bash`, `python3`, `node`, … : code from `-c`/`-e`, a here-document, stdin or a file.
    fn interpreter(
        &mut self,
        base: &str,
        args: &[Value],
        stdin: &Value,
        heredoc: Option<(&str, usize)>,
        at: &Place,
    ) -> Value {
        let language = Language::of_interpreter(base);
        let what = match language {
            Some(Language::Shell | Language::Make) => "shell",
            Some(Language::Python) => "Python",
            Some(Language::JavaScript | Language::TypeScript) => "JavaScript",
            None => base,
        };
        let inline = args.iter().position(|a| {
            a.consts.first().is_some_and(|f| {
                matches!(
                    f.as_str(),
                    "-c" | "-e" | "--eval" | "-p" | "-lc" | "-ic" | "-ec"
                )
            })
        });
        if let Some(index) = inline {
            if let Some(code) = args.get(index + 1) {
                if language == Some(Language::Shell) {
                    self.flow.run_shell(code, at);
                } else {
                    self.flow.run_code(code, what, at);
                }
                if let Some(language) = language {
                    self.nested_text(language, code, at);
                }
            }
            return Value::unknown();
        }
        let file = args
            .iter()
            .find(|a| !is_flag(a) && a.consts.first().is_none_or(|c| c != "-"));
        match file {
            Some(file) => {
                let data = self.flow.read_path(file, at);
                self.flow.run_code(&data.derived_if_tainted(), what, at);
                // `python3 send.py /tmp/diag.json`: the script's arguments, for its `argv`.
                if let Some(position) = args.iter().position(|a| std::ptr::eq(a, file)) {
                    self.flow.script_run_with(file, &args[position + 1..]);
                }
                // A script of the skill's prints what it printed when it was checked.
                self.flow.printed_by(file)
            }
            None => {
                // `curl … | sh` on one line is the line rules' to judge (they know the
                // vendors' installers); the code pass follows what crosses lines.
                let same_line = stdin
                    .origin(Source::Network)
                    .is_some_and(|o| o.at.file == at.file && o.at.line == at.line);
                if !same_line {
                    self.flow.run_code(&stdin.derived_if_tainted(), what, at);
                }
                match (heredoc, language) {
                    (Some((text, line)), Some(language)) => {
                        analyze_nested(self.flow, self.code, language, text, line)
                    }
                    _ => Value::unknown(),
                }
            }
        }
    }

    /// Parses a known code text in `language` (what `eval` or `-c` is given).
    fn nested_text(&mut self, language: Language, code: &Value, at: &Place) {
        if let Some(text) = code.consts.first() {
            analyze_nested(self.flow, self.code, language, text, at.line);
        }
    }

    fn find(&mut self, args: &[Value], at: &Place) {
        let deletes = args.iter().any(|a| {
            a.consts
                .iter()
                .any(|c| c == "-delete" || c == "rm" || c == "shred" || c == "unlink")
        });
        let root = args
            .iter()
            .take_while(|a| !is_flag(a))
            .find(|a| a.consts.iter().any(|c| is_everything(&normalize_path(c))));
        let limited = args.iter().any(|a| {
            a.consts.iter().any(|c| {
                matches!(
                    c.as_str(),
                    "-name" | "-iname" | "-path" | "-mtime" | "-newer" | "-empty" | "-size"
                )
            })
        });
        if let (true, Some(root), false) = (deletes, root, limited) {
            let target = root.consts.first().cloned().unwrap_or_default();
            self.flow.emit(
                at,
                Hit {
                    rule: "destructive.remove-recursive",
                    category: Category::Destructive,
                    risk: Risk::Critical,
                    message: format!("deletes everything under `{target}` with find: delete the step; remove only named paths inside the project"),
                    source: None,
                },
            );
        }
    }

    fn reads_device_forever(&mut self, target: &Value, node: Node<'t>) {
        if target
            .consts
            .iter()
            .any(|c| c == "/dev/zero" || c == "/dev/urandom")
        {
            let text = self.text(node).to_string();
            if text.contains('>') && !text.contains("head -c") && !text.contains("count=") {
                let at = self.place(node);
                self.disk_fill(&at);
            }
        }
    }

    fn disk_fill(&mut self, at: &Place) {
        self.flow.emit(
            at,
            Hit {
                rule: "resource-exhaustion.disk-fill",
                category: Category::ResourceExhaustion,
                risk: Risk::High,
                message: "writes without end (or a file of a huge size) until the disk is full, which stops the machine's programs from saving anything: delete it".into(),
                source: None,
            },
        );
    }

    /// The data behind a path argument: the file's, or the value's own when it is not a path.
    fn read_any(&mut self, value: &Value, at: &Place) -> Value {
        let mut data = self.flow.read_path(value, at);
        data.absorb(value);
        if value
            .consts
            .iter()
            .any(|c| is_everything(&normalize_path(c)) && normalize_path(c) != "/")
        {
            data = data.tainted(super::value::Origin {
                source: Source::Secret,
                what: "the whole home folder (its keys among it)".into(),
                at: at.clone(),
            });
        }
        data
    }

    fn input_of(&mut self, args: &[Value], stdin: &Value, at: &Place) -> Value {
        let mut input = stdin.clone();
        for arg in args.iter().filter(|a| !is_flag(a)) {
            input.absorb(&self.flow.read_path(arg, at));
        }
        input
    }

    fn function(&mut self, node: Node<'t>) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = self.text(name).to_string();
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        self.functions.insert(name.clone(), body);
        let calls_itself = calls_command(self.code, body, &name);
        let forks = calls_itself
            && (self.text(body).contains(&format!("{name} &"))
                || self.text(body).contains(&format!("| {name}"))
                || self.text(body).contains(&format!("|{name}")));
        if forks {
            let at = self.place(node);
            self.flow.emit(
                &at,
                Hit {
                    rule: "resource-exhaustion.fork-bomb",
                    category: Category::ResourceExhaustion,
                    risk: Risk::Critical,
                    message: format!("defines `{name}` to start copies of itself without end (a fork bomb), which freezes the machine until it is restarted: delete it"),
                    source: None,
                },
            );
        }
        let params =
            Value::from_source(Source::Input, "the function's arguments", &self.place(node));
        self.call_function(
            body,
            &[params.clone(), params.clone(), params.clone()],
            &params,
        );
    }

    /// Runs a function's body with `$1`, `$2`, … bound to `args`; returns its output.
    fn call_function(&mut self, body: Node<'t>, args: &[Value], all: &Value) -> Value {
        if self.calls >= MAX_CALL_DEPTH {
            return all.derived();
        }
        self.calls += 1;
        let mut bindings: Vec<(String, Value)> = args
            .iter()
            .enumerate()
            .map(|(i, a)| ((i + 1).to_string(), a.clone()))
            .collect();
        bindings.push(("@".into(), all.clone()));
        bindings.push(("*".into(), all.clone()));
        let saved: Vec<(String, Option<Value>)> = bindings
            .into_iter()
            .map(|(p, v)| (p.clone(), self.scope.vars.insert(p, v)))
            .collect();
        let output = self.statements(body, &Value::unknown());
        for (name, old) in saved {
            match old {
                Some(v) => self.scope.vars.insert(name, v),
                None => self.scope.vars.remove(&name),
            };
        }
        self.calls -= 1;
        output
    }

    fn for_loop(&mut self, node: Node<'t>, stdin: &Value) -> Value {
        if let Some(variable) = node.child_by_field_name("variable") {
            let name = self.text(variable).to_string();
            let mut cursor = node.walk();
            let values: Vec<Node> = node.children_by_field_name("value", &mut cursor).collect();
            let at = self.place(node);
            let choices: Vec<Value> = values
                .iter()
                .map(|v| {
                    let choice = self.word(*v);
                    // `for f in uploads/*`: each name is one whoever put the file there chose.
                    if choice.consts.iter().any(|c| c.contains('*')) {
                        choice.tainted(file_names(&at))
                    } else {
                        choice
                    }
                })
                .collect();
            let value = if choices.is_empty() {
                Value::from_source(Source::Input, "the script's arguments", &at)
            } else {
                Value::either(&choices)
            };
            self.scope.vars.insert(name, value);
        }
        match node.child_by_field_name("body") {
            Some(body) => self.statements(body, stdin),
            None => Value::unknown(),
        }
    }

    /// `while true` / `while :` with no way out, doing something that grows each time.
    fn endless_loop(&mut self, node: Node<'t>) {
        let Some(condition) = node.child_by_field_name("condition") else {
            return;
        };
        let condition = self.text(condition).trim().trim_end_matches(';').trim();
        if !matches!(condition, "true" | ":" | "[ 1 ]" | "(( 1 ))" | "/bin/true") {
            return;
        }
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let body_text = self.text(body);
        let exits = ["break", "exit", "return"]
            .iter()
            .any(|w| has_word(body_text, w));
        if exits {
            return;
        }
        let forks = body_text
            .trim_end()
            .trim_end_matches("done")
            .trim_end()
            .trim_end_matches(';')
            .ends_with('&')
            || body_text.contains("& ") && !body_text.contains("&&");
        let grows = body_text.contains(">>")
            || body_text.contains("+=")
            || body_text.contains("mkdir")
            || body_text.contains("cp ")
            || body_text.contains("dd ");
        if forks || grows {
            let at = self.place(node);
            self.flow.endless_loop(&at, forks);
        }
    }

    fn words(&mut self, node: Node<'t>) -> Vec<Value> {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        children.into_iter().map(|c| self.word(c)).collect()
    }

    /// The value of one word.
    fn word(&mut self, node: Node<'t>) -> Value {
        match node.kind() {
            "word" | "number" => placeholder_or_literal(self.text(node), &self.place(node)),
            "raw_string" => placeholder_or_literal(unquote(self.text(node)), &self.place(node)),
            "ansi_c_string" => {
                Value::literal(self.text(node).trim_start_matches('$').trim_matches('\''))
            }
            "string_content" => placeholder_or_literal(self.text(node), &self.place(node)),
            "string" | "concatenation" | "translated_string" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                if children.is_empty() {
                    return Value::literal(unquote(self.text(node)));
                }
                let text = self.text(node);
                let opening = if text.starts_with("$\"") { 2 } else { 1 };
                if node.kind() != "concatenation" && text.ends_with('"') && text.len() > opening {
                    return self.with_gaps_between(
                        node,
                        node.start_byte() + opening,
                        node.end_byte() - 1,
                    );
                }
                let parts: Vec<Value> = children.into_iter().map(|c| self.word(c)).collect();
                Value::concat(&parts)
            }
            "simple_expansion" | "expansion" => self.expansion(node),
            "command_substitution" | "process_substitution" => {
                // Its output: its origins, and its text when it printed a known one.
                let mut output = self.statements(node, &Value::unknown());
                output.object = Object::Plain;
                output
            }
            "arithmetic_expansion" => Value::unknown(),
            _ => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.statement(child, &Value::unknown());
                }
                Value::unknown()
            }
        }
    }

    fn expansion(&mut self, node: Node<'t>) -> Value {
        let name = named_child_of_kind(node, "variable_name")
            .or_else(|| named_child_of_kind(node, "special_variable_name"))
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let value = self.variable(node, &name);
        // `${X:-default}`: when X's text is not known, the default is the one it has.
        let default = self
            .text(node)
            .contains(":-")
            .then(|| {
                let mut cursor = node.walk();
                let last = node.named_children(&mut cursor).last();
                last
            })
            .flatten()
            .filter(|d| d.kind() != "variable_name");
        match default {
            Some(default) if value.consts.is_empty() => {
                let mut fallback = self.word(default);
                fallback.absorb(&value);
                fallback
            }
            _ => value,
        }
    }

    fn variable(&mut self, node: Node<'t>, name: &str) -> Value {
        let name = name.to_string();
        if let Some(value) = self.scope.vars.get(&name) {
            return value.clone();
        }
        if name == "HOME" {
            return Value::literal("~");
        }
        if name.chars().all(|c| c.is_ascii_digit()) && !name.is_empty()
            || name == "@"
            || name == "*"
        {
            return Value::from_source(
                Source::Input,
                format!("the script's argument ${name}"),
                &self.place(node),
            );
        }
        let at = self.place(node);
        self.flow.read_env(&name, &at)
    }

    /// The text of a node whose literal parts are the gaps between its children (a
    /// here-document's body): the gaps as written, the children evaluated.
    fn with_gaps(&mut self, node: Node<'t>) -> Value {
        self.with_gaps_between(node, node.start_byte(), node.end_byte())
    }

    /// `node`'s parts from byte `start` to `end`, the text between its named children (which
    /// the grammar does not name: the spaces in `"$HASH  $file"`) kept as literals.
    fn with_gaps_between(&mut self, node: Node<'t>, start: usize, end: usize) -> Value {
        let mut parts = Vec::new();
        let mut at = start;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            // The grammar counts the blanks before an expansion in a string as the expansion's
            // (`"$A  $B"`: the second is `  $B`).
            let text = self.text(child);
            let blanks = text.len() - text.trim_start().len();
            let starts = if child.kind().ends_with("expansion") {
                child.start_byte() + blanks
            } else {
                child.start_byte()
            };
            if starts > at {
                parts.push(Value::literal(&self.code.text[at..starts]));
            }
            parts.push(match child.kind() {
                "heredoc_content" => Value::literal(self.text(child)),
                _ => self.word(child),
            });
            at = child.end_byte();
        }
        if end > at {
            parts.push(Value::literal(&self.code.text[at..end]));
        }
        Value::concat(&parts)
    }
}

/// `<username from the message>`: a value the agent fills in from what it was given, so it is
/// input, not a literal; its text is kept for the paths and commands around it.
fn placeholder_or_literal(text: &str, at: &Place) -> Value {
    let trimmed = text.trim();
    let is_placeholder = trimmed.len() > 2
        && trimmed.starts_with('<')
        && trimmed.ends_with('>')
        && !trimmed[1..trimmed.len() - 1].contains(['<', '>'])
        && trimmed[1..].starts_with(|c: char| c.is_alphabetic());
    if !is_placeholder {
        return Value::literal(text);
    }
    let mut value = Value::from_source(
        Source::Input,
        format!("`{trimmed}`, which the agent fills in"),
        at,
    );
    value.consts = vec![text.to_string()];
    value.shape = Some(text.to_string());
    value
}

fn decoded(at: &Place) -> super::value::Origin {
    super::value::Origin {
        source: Source::Decoded,
        what: "encoded text".into(),
        at: at.clone(),
    }
}

/// `sudo`, `env X=1`, `nohup`, `time`, `command`, `exec`: the command they run.
fn strip_wrappers(mut words: Vec<Value>) -> (String, Vec<Value>) {
    loop {
        let Some(first) = words.first() else {
            return (String::new(), words);
        };
        let Some(name) = first.consts.first().cloned() else {
            return (String::new(), words);
        };
        let base = name.rsplit('/').next().unwrap_or(&name).to_string();
        let wrapper = matches!(
            base.as_str(),
            "sudo"
                | "doas"
                | "nohup"
                | "time"
                | "command"
                | "exec"
                | "nice"
                | "setsid"
                | "stdbuf"
                | "timeout"
        ) || (base == "env" && words.len() > 1);
        if !wrapper {
            return (name, words.split_off(1));
        }
        words.remove(0);
        while words.first().is_some_and(|w| {
            w.consts.first().is_some_and(|c| {
                c.starts_with('-')
                    || c.contains('=')
                    || (base == "timeout" && c.chars().all(|c| c.is_ascii_digit() || c == 's'))
            })
        }) {
            words.remove(0);
        }
    }
}

/// The command as a line with its words' known texts filled in.
fn resolved_text(name: &str, args: &[Value]) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let mut out = name.to_string();
    for arg in args {
        let word = arg.consts.first()?;
        out.push(' ');
        out.push_str(word);
    }
    Some(out)
}

/// Flags of `curl`/`wget` whose value is not data sent (headers, methods, auth, timeouts).
fn takes_value(flag: &str) -> bool {
    matches!(
        flag,
        "-H" | "--header"
            | "-X"
            | "--request"
            | "-A"
            | "--user-agent"
            | "-e"
            | "--referer"
            | "-w"
            | "--write-out"
            | "-m"
            | "--max-time"
            | "--connect-timeout"
            | "-b"
            | "--cookie"
            | "-c"
            | "--cookie-jar"
            | "--retry"
            | "-K"
            | "--config"
            | "-E"
            | "--cert"
            | "--key"
            | "--cacert"
            | "-r"
            | "--range"
            | "--oauth2-bearer"
            | "--header-file"
            | "-t"
            | "--tries"
            | "--timeout"
            | "-u"
            | "--user"
    )
}

/// A word without the quotes around it, when they are the only ones in it.
fn unquote_word(word: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = word.strip_prefix(quote).and_then(|w| w.strip_suffix(quote)) {
            if !inner.contains(['"', '\'']) {
                return inner;
            }
        }
    }
    word
}

fn is_flag(value: &Value) -> bool {
    value
        .consts
        .first()
        .is_some_and(|c| c.starts_with('-') && c.len() > 1)
}

/// `host:path`, `user@host:path`, `rsync://…`, `s3://…`: a place on another machine.
fn is_remote(path: &str) -> bool {
    path.contains("://")
        || path
            .split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/') && host.len() > 1)
}

/// The home folder or the root itself, where deleting "everything" is a wiped machine.
fn is_everything(path: &str) -> bool {
    matches!(path.trim_end_matches(['*', '.']), "~" | "~/" | "/" | "") && !path.is_empty()
}

fn deletes(text: &str) -> bool {
    ["rm ", "-delete", "shred ", "unlink ", "rmdir "]
        .iter()
        .any(|w| text.contains(w))
}

fn is_endless_output(body: &str) -> bool {
    let body = body.trim();
    body == "yes"
        || body.starts_with("yes ")
        || body.starts_with("cat /dev/zero")
        || body.starts_with("cat /dev/urandom")
}

fn huge_size(flag: &str) -> bool {
    let digits: String = flag.chars().filter(|c| c.is_ascii_digit()).collect();
    let number: u64 = digits.parse().unwrap_or(0);
    let unit = flag
        .trim_end_matches(['B', 'b'])
        .chars()
        .last()
        .unwrap_or(' ');
    match unit.to_ascii_uppercase() {
        'T' | 'P' | 'E' => true,
        'G' => number >= 20,
        _ => false,
    }
}

fn url_word(url: &mut String, value: &Value) {
    if url.is_empty() {
        if let Some(c) = value.consts.first() {
            *url = c.clone();
        }
    }
}

/// What publishes the project or files to the world: `npm publish`, `git push`, `gh gist`.
fn publish_command(base: &str, flags: &[&str]) -> Option<String> {
    let sub = flags
        .iter()
        .find(|f| !f.starts_with('-'))
        .copied()
        .unwrap_or("");
    let named = match (base, sub) {
        ("npm" | "pnpm" | "yarn", "publish") => "npm publish",
        ("git", "push") => "git push",
        ("gh", "gist") => "gh gist create",
        ("gh", "release") => "gh release upload",
        ("twine", "upload") => "twine upload",
        ("cargo", "publish") => "cargo publish",
        ("gem", "push") => "gem push",
        ("docker" | "podman", "push") => "docker push",
        ("aws", "s3") => "aws s3",
        ("gsutil", _) | ("rclone", _) => base,
        _ => return None,
    };
    Some(format!("`{named}`"))
}

/// Commands that print text from a service anyone can write to (an issue's body, a PR comment):
/// data from the network, however it is fetched.
fn remote_text_command(base: &str, flags: &[&str]) -> Option<String> {
    let sub = flags
        .iter()
        .find(|f| !f.starts_with('-'))
        .copied()
        .unwrap_or("");
    match (base, sub) {
        ("gh" | "glab" | "tea", "api" | "issue" | "pr" | "mr" | "gist" | "run" | "search") => Some(
            format!("what `{base} {sub}` prints (text anyone can write)"),
        ),
        _ => None,
    }
}

fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| w == word)
}

fn named_child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).find(|c| c.kind() == kind);
    found
}

/// Whether `body` runs the command `name`.
fn calls_command(code: &Code, body: Node, name: &str) -> bool {
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        if node.kind() == "command_name" && code.text_of(node) == name {
            return true;
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    false
}
