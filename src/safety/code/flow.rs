//! What code does with data, in terms shared by every language: read a file or the
//! environment, fetch, send, run a shell or code, query a database, write a file, encode. The
//! language walkers (`shell.rs`, `python.rs`, `javascript.rs`) turn calls into these operations;
//! here they become findings, each naming where its data came from and where it went.
//!
//! Files and exported variables carry data between the steps and the files of one skill: a
//! script that writes a key to `/tmp/k` taints `/tmp/k` for the script that uploads it.

use std::collections::{HashMap, HashSet};

use super::value::{Origin, Place, Source, Value};
use crate::safety::document::{Document, Kind};
use crate::safety::rules::{names_secret, persistence_target, Outlives};
use crate::safety::{excerpt, Category, Finding, Risk, SourceLocation};

/// The state of one skill's code: the channels between its steps, and the findings.
#[derive(Default)]
pub(super) struct Flow {
    /// Paths written, with the origins of what was written there.
    files: HashMap<String, Vec<Origin>>,
    /// Variables exported to later steps.
    pub exported: HashMap<String, Value>,
    /// Where the code made a cipher to encrypt with, once it has.
    encrypted: Option<Place>,
    /// Where the code probed the hosts of a network one by one, once it has.
    scanned: Option<Place>,
    /// Whether a secret was copied into the project (which a publish then ships).
    secret_in_project: Option<Origin>,
    /// Findings are only kept on the last pass; the first one fills the channels.
    pub emitting: bool,
    findings: Vec<Finding>,
    /// Lines shown as what not to do, by file.
    quiet: HashMap<String, HashSet<usize>>,
    /// What each script of the skill prints, by its file, for a step that runs it.
    printed: HashMap<String, Value>,
    /// The arguments a step runs each script of the skill with, by the path the step names.
    arguments: HashMap<String, Vec<Value>>,
    /// Scripts the code writes with a known text (a beacon, a hook, a unit's program): code
    /// of the skill too, walked as such once found.
    pub written_scripts: Vec<super::Unit>,
    /// The code being walked checks that a path stays inside a folder (`path.relative`,
    /// `is_relative_to`, `commonpath`): a path built from fetched names is then its concern.
    pub checks_containment: bool,
}

/// How many written scripts one skill's check walks.
const MAX_WRITTEN_SCRIPTS: usize = 16;

/// What a finding is, before its place is known.
pub(super) struct Hit {
    pub rule: &'static str,
    pub category: Category,
    pub risk: Risk,
    pub message: String,
    pub source: Option<Place>,
}

impl Flow {
    pub fn new(quiet: HashMap<String, HashSet<usize>>) -> Flow {
        Flow {
            quiet,
            ..Flow::default()
        }
    }

    /// Records what the script `file` printed.
    pub fn script_printed(&mut self, file: &str, output: Value) {
        self.printed.insert(file.to_string(), output.derived());
    }

    /// A step runs the script at `path` with `arguments`.
    pub fn script_run_with(&mut self, path: &Value, arguments: &[Value]) {
        // `"$(dirname "$0")/scopes.py"` is known by its shape, `*/scopes.py`.
        let names = if path.consts.is_empty() {
            vec![path.shape().to_string()]
        } else {
            path.consts.clone()
        };
        for name in names {
            let name = name.trim_start_matches("./").to_string();
            self.arguments
                .entry(name)
                .or_insert_with(|| arguments.to_vec());
        }
    }

    /// The arguments a step of the skill runs the script `file` with, when one does: its
    /// `argv` after the script's name.
    pub fn arguments_of(&self, file: &str) -> Option<&[Value]> {
        self.arguments.iter().find_map(|(name, arguments)| {
            (file == name
                || name.ends_with(&format!("/{file}"))
                || file.ends_with(&format!("/{name}")))
            .then_some(arguments.as_slice())
        })
    }

    /// What a step that runs the script at `path` gets: what that script printed, when it is
    /// one of the skill's (`bash scripts/gather.sh` finds `scripts/gather.sh`).
    pub fn printed_by(&self, path: &Value) -> Value {
        let mut out = Value::unknown();
        for name in &path.consts {
            let name = name.trim_start_matches("./");
            for (file, printed) in &self.printed {
                if file == name
                    || name.ends_with(&format!("/{file}"))
                    || file.ends_with(&format!("/{name}"))
                {
                    out.absorb(printed);
                }
            }
        }
        out
    }

    pub fn into_findings(self) -> Vec<Finding> {
        self.findings
    }

    /// Records a finding at `at`, with the context of its line applied.
    pub fn emit(&mut self, at: &Place, hit: Hit) {
        if !self.emitting {
            return;
        }
        let Hit {
            rule,
            category,
            mut risk,
            mut message,
            source,
        } = hit;
        let shown_as_bad = |place: &Place| {
            self.quiet
                .get(&place.file)
                .is_some_and(|lines| lines.contains(&place.line))
        };
        if risk > Risk::Low && (shown_as_bad(at) || source.as_ref().is_some_and(shown_as_bad)) {
            risk = Risk::Low;
            message += " (shown here as something not to do, so it stays low)";
        }
        self.findings.push(Finding {
            rule,
            category,
            risk,
            file: at.file.clone(),
            line: at.line,
            excerpt: excerpt(&at.excerpt),
            message,
            source: source.map(|s| SourceLocation {
                file: s.file,
                line: s.line,
                excerpt: excerpt(&s.excerpt),
            }),
        });
    }

    /// Reading the file at `path`: a secret if it is a credential store, or whatever an earlier
    /// step wrote there (or into the folder it is in, or, for a folder, into a file in it).
    pub fn read_path(&mut self, path: &Value, at: &Place) -> Value {
        self.path_from_network(
            path,
            "opens",
            "a `../` or `~` in it reads any file of the person's, keys included; resolve the path and refuse one outside the folder served",
            at,
        );
        // The contents' origins, not the name's.
        let mut out = Value::unknown();
        for normal in path_keys(path) {
            if names_secret(&normal) {
                out = out.tainted(Origin {
                    source: Source::Secret,
                    what: normal.clone(),
                    at: at.clone(),
                });
            }
            for (written, origins) in &self.files {
                if same_file_or_inside(&normal, written) {
                    for origin in origins {
                        out = out.tainted(origin.clone());
                    }
                }
            }
        }
        out
    }

    /// A path built from something fetched (a request's URL, an archive entry's name) that
    /// code `opens` or `writes`: nothing keeps it inside one folder.
    fn path_from_network(&mut self, path: &Value, does: &str, advice: &str, at: &Place) {
        let Some(origin) = path
            .origin(Source::Network)
            .filter(|_| path.built && !self.checks_containment)
        else {
            return;
        };
        let hit = flow_hit(
            "path-escape.request-path",
            Category::PathEscape,
            Risk::High,
            origin,
            &format!("and {does} the file that names, with nothing keeping it inside one folder"),
            at,
            advice,
        );
        self.emit(at, hit);
    }

    /// A function of `name` that calls itself with nothing that could stop it.
    pub fn unbounded_recursion(&mut self, name: &str, at: &Place) {
        self.emit(
            at,
            Hit {
                rule: "resource-exhaustion.unbounded-recursion",
                category: Category::ResourceExhaustion,
                risk: Risk::High,
                message: format!("`{name}` calls itself with no condition that ends it, so it runs until memory or the stack is exhausted: give it a base case, or delete it"),
                source: None,
            },
        );
    }

    /// A shell whose input and output are a network connection; `how` says how it was wired.
    pub fn reverse_shell(&mut self, how: &str, at: &Place) {
        self.emit(
            at,
            Hit {
                rule: "network.reverse-shell",
                category: Category::NetworkAbuse,
                risk: Risk::Critical,
                message: format!("{how} (a reverse shell), handing this machine to whoever is at the other end: delete it"),
                source: None,
            },
        );
    }

    /// An environment variable: a secret when its name says so, or what a step exported.
    pub fn read_env(&self, name: &str, at: &Place) -> Value {
        if let Some(value) = self.exported.get(name) {
            return value.clone();
        }
        if is_secret_name(name) {
            return Value::from_source(Source::Secret, format!("${name}"), at);
        }
        Value::unknown()
    }

    /// A file checked against a checksum or signature the skill pins (`sha256sum -c`,
    /// `gpg --verify`): what was downloaded there is what its author published, no longer
    /// anything the server chose.
    pub fn verified(&mut self, path: &Value) {
        for key in path_keys(path) {
            for (written, origins) in self.files.iter_mut() {
                if same_file_or_inside(written, &key) {
                    origins.retain(|o| o.source != Source::Network);
                }
            }
        }
    }

    /// A cipher made to encrypt with (`createCipheriv`, `AES.new`, `Fernet`).
    pub fn cipher(&mut self, at: &Place) {
        if self.encrypted.is_none() {
            self.encrypted = Some(at.clone());
        }
    }

    /// A file or folder deleted from code: read as the `rm -rf` it amounts to, and, for files
    /// found by walking the person's folders in code that encrypts, the last step of ransomware.
    pub fn remove(&mut self, path: &Value, at: &Place) {
        for text in &path.consts {
            self.recheck(
                &format!("rm -rf {text}"),
                "as the shell command it amounts to",
                at,
            );
        }
        // Names a listing of the home folder gave (`~/Documents/*`), not one file it names.
        let keys: Vec<String> = if path.consts.is_empty() {
            path.shape
                .iter()
                .map(|shape| normalize_path(shape))
                .collect()
        } else {
            path.consts
                .iter()
                .map(|text| normalize_path(text))
                .collect()
        };
        let found_under_home =
            !keys.is_empty() && keys.iter().all(|k| k.starts_with('~') && k.contains('*'));
        if let (Some(cipher), true) = (self.encrypted.clone(), found_under_home) {
            self.emit(
                at,
                Hit {
                    rule: "malware.ransomware",
                    category: Category::Malware,
                    risk: Risk::Critical,
                    message: format!("encrypts files (line {}) it finds in the person's folders and deletes the originals (line {}), which is how ransomware takes them hostage: delete it", cipher.line, at.line),
                    source: Some(cipher),
                },
            );
        }
    }

    /// A connection opened to a host whose address is built inside a sweep of a network's
    /// addresses (a loop to 254): a scan of the network the machine is on.
    pub fn scan(&mut self, at: &Place) {
        if self.scanned.is_none() {
            self.scanned = Some(at.clone());
        }
        self.emit(
            at,
            Hit {
                rule: "network.scan",
                category: Category::NetworkAbuse,
                risk: Risk::Medium,
                message: "probes the hosts of a network one address after another (a port scan): make sure it is a network the person owns and asked to scan".into(),
                source: None,
            },
        );
    }

    /// Data that goes to another machine through `how`.
    pub fn send(&mut self, how: &str, data: &[&Value], at: &Place) {
        if let Some(scanned) = self.scanned.clone() {
            if data.iter().any(|v| !v.literal) {
                self.emit(
                    at,
                    Hit {
                        rule: "exfiltration.network-map",
                        category: Category::Exfiltration,
                        risk: Risk::High,
                        message: format!("scans the network this machine is on (line {}) and sends data to another machine with {how} (line {}): a map of the hosts and their open ports is what an intruder wants first; delete the upload", scanned.line, at.line),
                        source: Some(scanned),
                    },
                );
            }
        }
        for value in data {
            if let Some(origin) = value.origin(Source::Secret) {
                let hit = flow_hit(
                    "exfiltration.data-flow",
                    Category::Exfiltration,
                    Risk::Critical,
                    origin,
                    &format!("and sends it to another machine with {how}"),
                    at,
                    "delete the upload; nothing in a skill should send keys or credentials anywhere",
                );
                self.emit(at, hit);
                return;
            }
        }
    }

    /// A publish (`npm publish`, `git push`, `gh gist create`): it ships the project, and any
    /// secret copied into it.
    pub fn publish(&mut self, how: &str, at: &Place) {
        if let Some(origin) = self.secret_in_project.clone() {
            let hit = flow_hit(
                "exfiltration.data-flow",
                Category::Exfiltration,
                Risk::Critical,
                &origin,
                &format!("into the project, which {how} then makes public"),
                at,
                "delete the copy; a published package or repository must hold no keys",
            );
            self.emit(at, hit);
        }
    }

    /// Text that runs as code in `language` (`eval`, `exec`, `new Function`, `bash -c`).
    pub fn run_code(&mut self, code: &Value, language: &str, at: &Place) {
        if code.literal {
            return;
        }
        if let Some(origin) = code.origin(Source::Network) {
            let hit = flow_hit(
                "download-execute.data-flow",
                Category::DownloadExecute,
                Risk::Critical,
                origin,
                &format!("and runs it as {language}"),
                at,
                "delete it; run only code that is in the skill, where a person can read it",
            );
            self.emit(at, hit);
        } else if let Some(origin) = code.origin(Source::Decoded) {
            let hit = flow_hit(
                "obfuscation.decoded-code",
                Category::Obfuscation,
                Risk::Critical,
                origin,
                &format!("and runs what it decoded as {language}"),
                at,
                "code hidden by encoding is written so that nobody reads it: delete it",
            );
            self.emit(at, hit);
        } else if code.taint.is_empty() && language == "shell" {
            // `eval "$(ssh-agent -s)"`: a tool's own set-up lines, the shell's usual idiom.
            self.emit(
                at,
                Hit {
                    rule: "code-execution.dynamic",
                    category: Category::CodeExecution,
                    risk: Risk::Low,
                    message: "evaluates text a command printed as shell: fine for a tool's own set-up (`ssh-agent -s`, `direnv hook`), but check that the command is one the person has".into(),
                    source: None,
                },
            );
        } else {
            let how = match code.origin(Source::Input) {
                Some(origin) => format!(" built from {} (line {})", origin.what, origin.at.line),
                None => String::new(),
            };
            self.emit(
                at,
                Hit {
                    rule: "code-execution.dynamic",
                    category: Category::CodeExecution,
                    risk: Risk::High,
                    message: format!("runs text{how} as {language} code, so whatever that text holds runs with the person's rights: call the code directly instead of evaluating a string"),
                    source: code.origin(Source::Input).map(|o| o.at.clone()),
                },
            );
        }
    }

    /// A command string handed to a shell (`os.system`, `exec`, `shell=True`, `sh -c`).
    /// Returns whether its text is known, for the caller to read it as shell.
    pub fn run_shell(&mut self, command: &Value, at: &Place) {
        if command.literal {
            return;
        }
        let outside = command
            .origin(Source::Network)
            .or_else(|| command.origin(Source::Input))
            .or_else(|| command.origin(Source::Secret));
        if !command.built {
            if command.origin(Source::Network).is_some()
                || command.origin(Source::Decoded).is_some()
            {
                self.run_code(command, "a shell command", at);
            }
            return;
        }
        let (risk, how) = match outside {
            Some(origin) => (
                if origin.source == Source::Network {
                    Risk::Critical
                } else {
                    Risk::High
                },
                format!(" built from {} (line {})", origin.what, origin.at.line),
            ),
            None if command.consts.is_empty() => (
                Risk::Medium,
                " built from values it does not control".to_string(),
            ),
            None => return,
        };
        self.emit(
            at,
            Hit {
                rule: "command-injection.shell-string",
                category: Category::CommandInjection,
                risk,
                message: format!("hands a shell a command{how}: a quote or `;` in it runs a command of its own; pass the arguments as a list, without a shell"),
                source: outside.map(|o| o.at.clone()),
            },
        );
    }

    /// A query text handed to a database.
    pub fn query(&mut self, query: &Value, at: &Place) {
        if !query.built || query.literal {
            return;
        }
        let input = query.origin(Source::Input);
        let how = input.map_or(String::new(), |o| {
            format!(" from {} (line {})", o.what, o.at.line)
        });
        self.emit(
            at,
            Hit {
                rule: "sql-injection.formatted-query",
                category: Category::SqlInjection,
                risk: Risk::High,
                message: format!("builds an SQL query by putting values{how} into its text, so a quote in a value rewrites the query: pass the values as parameters (`?`, `%s`, `$1`) instead"),
                source: input.map(|o| o.at.clone()),
            },
        );
    }

    /// Data written to the file at `path` (appended when `append`).
    pub fn write_path(&mut self, path: &Value, data: &Value, append: bool, at: &Place) {
        self.path_from_network(
            path,
            "writes",
            "an entry named `../../.bashrc` or `/etc/…` lands outside (zip slip); resolve each path and refuse one outside the target folder",
            at,
        );
        if let ([text], [name]) = (data.consts.as_slice(), path.consts.as_slice()) {
            self.script_written(name, text, at);
        }
        for normal in path_keys(path) {
            let entry = self.files.entry(normal.clone()).or_default();
            for origin in &data.taint {
                if !entry.contains(origin) {
                    entry.push(origin.clone());
                }
            }
            if let Some(origin) = data.origin(Source::Secret) {
                if is_in_project(&normal) && self.secret_in_project.is_none() {
                    self.secret_in_project = Some(origin.clone());
                }
            }
            if let Some(target) = persistence_target(&normal) {
                self.persistence(&target, &normal, data, append, at);
            } else if names_secret(&normal) && !normal.ends_with('/') && !normal.ends_with('*') {
                self.credential_write(&normal, data, at);
            }
        }
    }

    /// Keeps a script written from a literal text, by the language its name or `#!` says, to
    /// be walked as code whose lines sit at the write.
    fn script_written(&mut self, name: &str, text: &str, at: &Place) {
        let Some(language) = super::Language::of_script(name, text) else {
            return;
        };
        let known = self
            .written_scripts
            .iter()
            .any(|s| s.file == at.file && s.first_line == at.line && s.text == text);
        if !known && self.written_scripts.len() < MAX_WRITTEN_SCRIPTS {
            self.written_scripts.push(super::Unit {
                file: at.file.clone(),
                language,
                text: text.to_string(),
                first_line: at.line,
            });
        }
    }

    /// A write to the person's own credential file (`~/.npmrc`, `~/.aws/credentials`): worth a
    /// look always, and harmful when what it writes was hidden by encoding or turns certificate
    /// checks off.
    fn credential_write(&mut self, path: &str, data: &Value, at: &Place) {
        const INSECURE: &[&str] = &[
            "strict-ssl=false",
            "strict-ssl false",
            "sslverify = false",
            "sslVerify=false",
            "insecure",
            "verify_ssl = false",
        ];
        let hidden = data.origin(Source::Decoded);
        let insecure = data
            .consts
            .iter()
            .any(|t| INSECURE.iter().any(|w| t.contains(w)));
        let (risk, why) = match (hidden, insecure) {
            (Some(origin), _) => (
                Risk::High,
                format!(", with {} (line {}) in it", origin.what, origin.at.line),
            ),
            (None, true) => (Risk::High, ", and turns certificate checks off".to_string()),
            (None, false) => (Risk::Low, String::new()),
        };
        self.emit(
            at,
            Hit {
                rule: "credentials.overwrite",
                category: Category::Credentials,
                risk,
                message: format!("writes the person's credential file `{path}`{why}: every later tool then uses what the skill put there; leave credentials to the person"),
                source: hidden.map(|o| o.at.clone()),
            },
        );
    }

    fn persistence(
        &mut self,
        target: &Outlives,
        path: &str,
        data: &Value,
        append: bool,
        at: &Place,
    ) {
        // What it writes fetches code, or names a file an earlier step downloaded.
        let runs_fetched_file = self.files.iter().any(|(written, origins)| {
            let name = written.trim_end_matches('*');
            name.len() > 4
                && origins
                    .iter()
                    .any(|o| matches!(o.source, Source::Network | Source::Decoded))
                && (data.consts.iter().any(|text| text.contains(name))
                    || data
                        .shape
                        .as_ref()
                        .is_some_and(|shape| shape.contains(name)))
        });
        let fetches = runs_fetched_file
            || data.origin(Source::Network).is_some()
            || data.consts.iter().any(|text| fetches_or_connects(text));
        let (risk, tail) = if fetches {
            (
                target.with_payload,
                ", and what it writes fetches code or opens a connection: delete it",
            )
        } else if append {
            (
                target.risk,
                ": keep it only if the person asked for exactly this",
            )
        } else {
            (
                target.replace_risk,
                " (it writes or copies the whole file: check what it puts there)",
            )
        };
        self.emit(
            at,
            Hit {
                rule: target.rule,
                category: Category::Persistence,
                risk,
                message: format!("writes `{path}` from code: it {}{tail}", target.what),
                source: data.origin(Source::Network).map(|o| o.at.clone()),
            },
        );
    }

    /// An encoding of data (`base64`, `b64encode`, `.toString('base64')`): of a secret, it is
    /// how a theft is hidden.
    pub fn encode(&mut self, data: &Value, how: &str, at: &Place) -> Value {
        if let Some(origin) = data.origin(Source::Secret) {
            let hit = flow_hit(
                "exfiltration.secret-encoded",
                Category::Exfiltration,
                Risk::High,
                origin,
                &format!("and encodes it with {how}"),
                at,
                "an encoded secret is one being readied to leave: delete it, a skill has no reason to encode keys",
            );
            self.emit(at, hit);
        }
        data.derived()
    }

    /// A secret copied to a file outside the skill: staged for something else to send.
    pub fn copy(&mut self, from: &Value, to: &Value, at: &Place) {
        self.write_path(to, from, false, at);
    }

    /// A loop without end that forks (`fork-bomb`) or grows (`unbounded-loop`) on each pass.
    pub fn endless_loop(&mut self, at: &Place, forks: bool) {
        let (rule, risk, what) = if forks {
            (
                "resource-exhaustion.fork-bomb",
                Risk::Critical,
                "starts a new process on every pass of a loop that never ends",
            )
        } else {
            (
                "resource-exhaustion.unbounded-loop",
                Risk::High,
                "grows a file or the memory on every pass of a loop that never ends",
            )
        };
        self.emit(
            at,
            Hit {
                rule,
                category: Category::ResourceExhaustion,
                risk,
                message: format!(
                    "{what}, until the machine runs out: delete it, or give the loop an end"
                ),
                source: None,
            },
        );
    }

    /// Runs the line rules over text the code assembled (a command or string whose pieces were
    /// apart in the source): a split key or a `rm -rf` hidden behind variables is seen whole.
    pub fn recheck(&mut self, text: &str, why: &str, at: &Place) {
        if !self.emitting || text.trim().is_empty() {
            return;
        }
        let document = Document::parse(text, Kind::Script);
        let mut raw = crate::safety::rules::check(&document);
        raw.extend(crate::safety::unicode::check(&document));
        for finding in raw {
            if finding.risk < Risk::Medium {
                continue;
            }
            self.emit(
                at,
                Hit {
                    rule: finding.rule,
                    category: finding.category,
                    risk: finding.risk,
                    message: format!("{} ({why}: `{}`)", finding.message, excerpt(text)),
                    source: None,
                },
            );
        }
    }
}

/// A finding about data that came from `origin` and reached `at`.
fn flow_hit(
    rule: &'static str,
    category: Category,
    risk: Risk,
    origin: &Origin,
    does: &str,
    at: &Place,
    advice: &str,
) -> Hit {
    let read = match origin.source {
        Source::Secret => "reads",
        Source::Network => "fetches",
        Source::Input => "takes",
        Source::Decoded => "decodes",
    };
    let from = if origin.at.file == at.file {
        format!("line {}", origin.at.line)
    } else {
        format!("{} line {}", origin.at.file, origin.at.line)
    };
    Hit {
        rule,
        category,
        risk,
        message: format!(
            "{read} {} ({from}) {does} (line {}): {advice}",
            origin.what, at.line
        ),
        source: Some(origin.at.clone()),
    }
}

/// Home folders written every way code writes them, as `~`: `$HOME`, `${HOME}`, `%h`,
/// `/home/<user>`, `/Users/<user>`, `/root`.
pub(super) fn normalize_path(path: &str) -> String {
    let path = path.trim().trim_matches(['"', '\'']);
    for home in ["${HOME}", "$HOME", "%h", "~"] {
        if let Some(rest) = path.strip_prefix(home) {
            return format!("~{rest}");
        }
    }
    for base in ["/home/", "/Users/"] {
        if let Some(rest) = path.strip_prefix(base) {
            let after_user = rest.find('/').map_or("", |i| &rest[i..]);
            return format!("~{after_user}");
        }
    }
    if let Some(rest) = path.strip_prefix("/root") {
        if rest.is_empty() || rest.starts_with('/') {
            return format!("~{rest}");
        }
    }
    path.to_string()
}

/// The names a path value goes by: its known texts, or its shape when only part is known.
fn path_keys(path: &Value) -> Vec<String> {
    if !path.consts.is_empty() {
        return path.consts.iter().map(|p| normalize_path(p)).collect();
    }
    let shape = path.shape();
    if shape.chars().filter(|c| *c != '*' && *c != '/').count() >= 3 {
        vec![normalize_path(shape)]
    } else {
        Vec::new()
    }
}

/// Whether reading `read` reads what was written to `written`: the same file (`*` in either
/// matching any text), a file inside a folder written whole, or a folder (or glob) holding the
/// file written (`cp -r /tmp/x`, `tar c /tmp/x` read all of `/tmp/x/`).
fn same_file_or_inside(read: &str, written: &str) -> bool {
    let folder = |p: &str| p.trim_end_matches(['*', '/', '.']).to_string();
    matches_wildcard(read, written)
        || matches_wildcard(written, read)
        || read.starts_with(&format!("{}/", folder(written)))
        || written.starts_with(&format!("{}/", folder(read)))
}

/// Whether `text` matches `pattern`, where `*` in the pattern stands for any text.
fn matches_wildcard(pattern: &str, text: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(mut remaining) = text.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = rest.split('*').collect();
    for (index, piece) in pieces.iter().enumerate() {
        if index == pieces.len() - 1 {
            return remaining.ends_with(piece);
        }
        match remaining.find(piece) {
            Some(at) => remaining = &remaining[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// A path relative to where the skill runs: the project, which a publish ships.
fn is_in_project(path: &str) -> bool {
    !(path.starts_with('/') || path.starts_with('~') || path.starts_with('$') || path.is_empty())
}

/// Environment variable names that hold secrets by convention.
pub(super) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const WORDS: &[&str] = &[
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE",
        "CREDENTIAL",
        "AUTH",
        "SESSION",
    ];
    WORDS.iter().any(|w| upper.contains(w))
}

/// Whether code sweeps the addresses of a network: a loop that counts to a subnet's last host.
pub(super) fn sweeps_addresses(text: &str) -> bool {
    const BOUNDS: &[&str] = &[
        "< 255",
        "<255",
        "<= 254",
        "<=254",
        "< 256",
        "<256",
        "<= 255",
        "<=255",
        "range(1, 255)",
        "range(1,255)",
        "range(1, 256)",
        "range(256)",
        "range(255)",
        "range(1, 254)",
        "seq 1 254",
        "seq 1 255",
        "{1..254}",
        "{1..255}",
    ];
    BOUNDS.iter().any(|bound| text.contains(bound))
}

/// Text that fetches code or opens a connection when a shell runs it.
pub(super) fn fetches_or_connects(text: &str) -> bool {
    let words = [
        "curl ",
        "wget ",
        "nc ",
        "ncat ",
        "socat ",
        "/dev/tcp/",
        "fetch(",
        "urlopen",
    ];
    words.iter().any(|w| text.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_finds_what_was_written_by_name_glob_or_folder() {
        assert!(same_file_or_inside("/tmp/x.json", "/tmp/x.json"));
        assert!(same_file_or_inside("/tmp/.backend-*", "/tmp/.backend-*"));
        assert!(same_file_or_inside("*/bundle/*", "*/bundle/"));
        assert!(same_file_or_inside("~/.local/ocrx/setup", "~/.local/ocrx"));
        assert!(same_file_or_inside("/tmp/out/*", "/tmp/out/env.txt"));
        assert!(!same_file_or_inside("/tmp/other", "/tmp/x.json"));
        assert!(!same_file_or_inside("~/.local/ocrxy", "~/.local/ocrx"));
        assert!(same_file_or_inside(
            "/tmp/bundle",
            "/tmp/bundle/env/vars.txt"
        ));
        assert!(!same_file_or_inside("/tmp/bundle", "/tmp/bundles/vars.txt"));
    }

    #[test]
    fn home_folders_are_one_spelling() {
        assert_eq!(normalize_path("$HOME/.ssh/id_rsa"), "~/.ssh/id_rsa");
        assert_eq!(normalize_path("${HOME}"), "~");
        assert_eq!(
            normalize_path("/home/ana/.aws/credentials"),
            "~/.aws/credentials"
        );
        assert_eq!(normalize_path("/Users/ana"), "~");
        assert_eq!(normalize_path("%h/"), "~/");
        assert_eq!(normalize_path("/rootfs/x"), "/rootfs/x");
    }
}
