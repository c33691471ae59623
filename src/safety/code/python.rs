//! Python: imports and their aliases, calls by their full name (`sp.run` is
//! `subprocess.run`, `getattr(os, "sys"+"tem")` is `os.system`), and the values that flow
//! between them, as `flow` operations.

use std::collections::HashMap;

use tree_sitter::Node;

use super::flow::{Flow, Hit};
use super::value::{Object, Origin, Place, Source, Value};
use super::{analyze_nested, shell, shell_string, unquote, Code, Language, Scope};
use crate::safety::{Category, Risk};

/// Walks a Python tree; returns what it prints.
pub(super) fn walk(flow: &mut Flow, scope: &mut Scope, code: &Code, root: Node) -> Value {
    let mut walker = Walker {
        flow,
        scope,
        code,
        functions: HashMap::new(),
        returns: Vec::new(),
        calls: 0,
        stdio_on_socket: false,
        printed: Value::unknown(),
    };
    walker.block(root);
    walker.printed
}

struct Walker<'f, 's, 'c, 't> {
    flow: &'f mut Flow,
    scope: &'s mut Scope,
    code: &'c Code<'c>,
    /// The functions defined so far: a call runs the body with its arguments bound.
    functions: HashMap<String, (Vec<String>, Node<'t>)>,
    /// What the function being run returns.
    returns: Vec<Value>,
    calls: usize,
    /// `os.dup2` put a socket on the standard streams: a shell started now is a remote one.
    stdio_on_socket: bool,
    /// What the code prints (`print`, `sys.stdout.write`).
    printed: Value,
}

/// How deep calls of a skill's own functions are followed.
const MAX_CALL_DEPTH: usize = 3;

/// Calls that send their arguments to another machine.
const SENDS: &[&str] = &[
    "requests.post",
    "requests.put",
    "requests.patch",
    "requests.request",
    "httpx.post",
    "httpx.put",
    "httpx.patch",
    "httpx.request",
    "urllib.request.Request",
    "aiohttp.ClientSession.post",
    "socket.create_connection",
    "smtplib.SMTP",
    "ftplib.FTP",
];
/// Calls that fetch (and send their URL and parameters).
const FETCHES: &[&str] = &[
    "requests.get",
    "requests.head",
    "httpx.get",
    "urllib.request.urlopen",
    "urllib.urlopen",
    "urllib2.urlopen",
    "urlopen",
    "urllib.request.urlretrieve",
    "urlretrieve",
    "requests.Session.get",
];
/// Calls that read email: what a message says, its sender among it, is whoever sent it's.
const MAIL_READERS: &[&str] = &[
    "email.message_from_binary_file",
    "email.message_from_file",
    "email.message_from_bytes",
    "email.message_from_string",
    "mailbox.mbox",
    "mailbox.Maildir",
    "imaplib.IMAP4_SSL",
    "imaplib.IMAP4",
    "poplib.POP3_SSL",
];
/// Calls that download a file and return its path.
const DOWNLOADS: &[&str] = &[
    "huggingface_hub.hf_hub_download",
    "hf_hub_download",
    "gdown.download",
    "wget.download",
    "torch.hub.download_url_to_file",
    "keras.utils.get_file",
    "tensorflow.keras.utils.get_file",
    "tf.keras.utils.get_file",
    "pooch.retrieve",
];
/// Calls that look a name up in DNS.
const RESOLVES: &[&str] = &[
    "socket.gethostbyname",
    "socket.gethostbyname_ex",
    "socket.getaddrinfo",
    "dns.resolver.resolve",
    "dns.resolver.query",
];
/// Calls that run a command through a shell.
const SHELL_CALLS: &[&str] = &[
    "os.system",
    "os.popen",
    "commands.getoutput",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "os.popen2",
    "os.popen3",
];
/// Calls that start a program from an argument vector (a shell only with `shell=True`).
const SPAWNS: &[&str] = &[
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
    "os.execvp",
    "os.execv",
    "os.spawnvp",
    "os.spawnlp",
    "pty.spawn",
];
const ENCODES: &[&str] = &[
    "base64.b64encode",
    "base64.b32encode",
    "base64.b16encode",
    "base64.b85encode",
    "base64.a85encode",
    "base64.urlsafe_b64encode",
    "base64.encodebytes",
    "base64.standard_b64encode",
    "binascii.hexlify",
    "binascii.b2a_base64",
    "binascii.b2a_hex",
    "codecs.encode",
    "zlib.compress",
    "gzip.compress",
    "bz2.compress",
    "lzma.compress",
];
const DECODES: &[&str] = &[
    "base64.b64decode",
    "base64.b32decode",
    "base64.b16decode",
    "base64.b85decode",
    "base64.a85decode",
    "base64.urlsafe_b64decode",
    "base64.decodebytes",
    "base64.standard_b64decode",
    "binascii.unhexlify",
    "binascii.a2b_base64",
    "binascii.a2b_hex",
    "bytes.fromhex",
    "codecs.decode",
    "zlib.decompress",
    "gzip.decompress",
    "bz2.decompress",
    "lzma.decompress",
];
/// Calls that run text as Python.
const EVALS: &[&str] = &[
    "eval",
    "exec",
    "builtins.eval",
    "builtins.exec",
    "execfile",
    "runpy.run_path",
];
/// Calls that turn bytes into objects by running code (`pickle`): risky on fetched data.
const UNPICKLES: &[&str] = &[
    "pickle.loads",
    "pickle.load",
    "marshal.loads",
    "dill.loads",
    "cloudpickle.loads",
];
/// Calls that return their (first) argument as a path.
const PATH_OF: &[&str] = &[
    "os.path.expanduser",
    "os.path.expandvars",
    "os.path.abspath",
    "os.path.realpath",
    "os.path.normpath",
    "pathlib.Path",
    "pathlib.PurePath",
    "pathlib.PosixPath",
    "Path",
    "PurePath",
    "PosixPath",
    "str",
    "os.fspath",
    "compile",
];
const PATH_JOINS: &[&str] = &["os.path.join", "posixpath.join", "os.sep.join"];
const COPIES: &[&str] = &[
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.copytree",
    "shutil.move",
    "os.rename",
    "os.replace",
];
const REMOVES: &[&str] = &[
    "shutil.rmtree",
    "os.removedirs",
    "os.rmdir",
    "os.remove",
    "os.unlink",
];

impl<'t> Walker<'_, '_, '_, 't> {
    fn place(&self, node: Node) -> Place {
        self.code.place(node)
    }

    fn text(&self, node: Node) -> &str {
        self.code.text_of(node)
    }

    fn block(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.statement(child);
        }
    }

    fn statement(&mut self, node: Node<'t>) {
        match node.kind() {
            "import_statement" => self.import(node),
            "import_from_statement" => self.import_from(node),
            "expression_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.expression(child);
                }
            }
            "function_definition" => self.function(node),
            "decorated_definition" | "class_definition" => {
                if let Some(definition) = node.child_by_field_name("definition") {
                    self.statement(definition);
                } else if let Some(body) = node.child_by_field_name("body") {
                    self.block(body);
                }
            }
            "for_statement" => {
                let iterable = node
                    .child_by_field_name("right")
                    .map_or_else(Value::unknown, |r| self.expression(r));
                if let Some(left) = node.child_by_field_name("left") {
                    let element = iterable.element();
                    self.bind(left, element);
                }
                self.children_blocks(node);
            }
            "while_statement" => {
                self.endless_loop(node);
                if let Some(condition) = node.child_by_field_name("condition") {
                    self.expression(condition);
                }
                self.children_blocks(node);
            }
            "with_statement" => {
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    if n.kind() == "with_item" {
                        if let Some(value) = n.child_by_field_name("value") {
                            if value.kind() == "as_pattern" {
                                let item = value
                                    .named_child(0)
                                    .map_or_else(Value::unknown, |v| self.expression(v));
                                if let Some(alias) = value.child_by_field_name("alias") {
                                    let target = alias.named_child(0).unwrap_or(alias);
                                    self.bind(target, item);
                                }
                            } else {
                                self.expression(value);
                            }
                        }
                        continue;
                    }
                    if n.kind() == "block" {
                        continue;
                    }
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.block(body);
                }
            }
            "block" | "module" => self.block(node),
            "if_statement" | "elif_clause" | "try_statement" | "except_clause" | "else_clause"
            | "finally_clause" | "match_statement" | "case_clause" => {
                if let Some(condition) = node.child_by_field_name("condition") {
                    self.expression(condition);
                }
                self.children_blocks(node);
            }
            "return_statement" | "assert_statement" | "raise_statement" | "delete_statement"
            | "print_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    let value = self.expression(child);
                    if node.kind() == "return_statement" {
                        self.returns.push(value);
                    }
                }
            }
            _ => {}
        }
    }

    /// The statements of a compound statement's blocks and clauses.
    fn children_blocks(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if matches!(
                child.kind(),
                "block"
                    | "elif_clause"
                    | "else_clause"
                    | "except_clause"
                    | "finally_clause"
                    | "case_clause"
            ) {
                self.statement(child);
            }
        }
    }

    fn import(&mut self, node: Node<'t>) {
        let mut cursor = node.walk();
        let names: Vec<Node> = node.children_by_field_name("name", &mut cursor).collect();
        for name in names {
            if name.kind() == "aliased_import" {
                let module = name
                    .child_by_field_name("name")
                    .map(|n| self.text(n).to_string());
                let alias = name
                    .child_by_field_name("alias")
                    .map(|n| self.text(n).to_string());
                if let (Some(module), Some(alias)) = (module, alias) {
                    self.scope
                        .vars
                        .insert(alias, Value::object(Object::Module(module)));
                }
            } else {
                let full = self.text(name).to_string();
                let top = full.split('.').next().unwrap_or(&full).to_string();
                self.scope
                    .vars
                    .insert(top.clone(), Value::object(Object::Module(top)));
            }
        }
    }

    fn import_from(&mut self, node: Node<'t>) {
        let Some(module) = node.child_by_field_name("module_name") else {
            return;
        };
        let module = self.text(module).to_string();
        let mut cursor = node.walk();
        let names: Vec<Node> = node.children_by_field_name("name", &mut cursor).collect();
        for name in names {
            let (imported, alias) = if name.kind() == "aliased_import" {
                (
                    name.child_by_field_name("name")
                        .map(|n| self.text(n).to_string()),
                    name.child_by_field_name("alias")
                        .map(|n| self.text(n).to_string()),
                )
            } else {
                let n = self.text(name).to_string();
                (Some(n.clone()), Some(n))
            };
            if let (Some(imported), Some(alias)) = (imported, alias) {
                self.scope.vars.insert(
                    alias,
                    Value::object(Object::Module(format!("{module}.{imported}"))),
                );
            }
        }
    }

    fn function(&mut self, node: Node<'t>) {
        let name = node
            .child_by_field_name("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let at = self.place(node);
        let mut params = Vec::new();
        if let Some(parameters) = node.child_by_field_name("parameters") {
            let mut stack = vec![parameters];
            while let Some(p) = stack.pop() {
                if p.kind() == "identifier" {
                    let param = self.text(p).to_string();
                    if param != "self" && param != "cls" {
                        self.scope.vars.insert(
                            param.clone(),
                            Value::from_source(
                                Source::Input,
                                format!("the parameter `{param}`"),
                                &at,
                            ),
                        );
                        params.push(param);
                    }
                    continue;
                }
                // `*args`: the rest of the positional arguments, as one list.
                if p.kind() == "list_splat_pattern" {
                    if let Some(name) = p.named_child(0) {
                        let param = self.text(name).to_string();
                        self.scope.vars.insert(
                            param.clone(),
                            Value::from_source(
                                Source::Input,
                                format!("the parameter `{param}`"),
                                &at,
                            ),
                        );
                        params.push(format!("*{param}"));
                    }
                    continue;
                }
                if p.kind() == "default_parameter" || p.kind() == "typed_default_parameter" {
                    if let Some(n) = p.child_by_field_name("name") {
                        stack.push(n);
                    }
                    continue;
                }
                let mut cursor = p.walk();
                stack.extend(p.named_children(&mut cursor));
            }
        }
        if let Some(body) = node.child_by_field_name("body") {
            self.unbounded_recursion(&name, body, &at);
            // The parameters were collected from the last one back.
            params.reverse();
            self.functions.insert(name, (params, body));
            let saved = std::mem::take(&mut self.returns);
            self.block(body);
            self.returns = saved;
        }
    }

    /// Runs a function of the skill's own with its parameters bound to `args`; returns what
    /// it returns.
    fn call_function(
        &mut self,
        params: &[String],
        body: Node<'t>,
        args: &[Value],
        keywords: &[(String, Value)],
    ) -> Value {
        if self.calls >= MAX_CALL_DEPTH {
            let mut out = Value::unknown();
            for arg in args {
                out.absorb(arg);
            }
            return out;
        }
        self.calls += 1;
        let mut saved = Vec::new();
        for (index, param) in params.iter().enumerate() {
            if let Some(rest) = param.strip_prefix('*') {
                let rest_of = Value::list(args.get(index..).unwrap_or_default().to_vec());
                saved.push((
                    rest.to_string(),
                    self.scope.vars.insert(rest.to_string(), rest_of),
                ));
                continue;
            }
            let value = keywords
                .iter()
                .find(|(k, _)| k == param)
                .map(|(_, v)| v.clone())
                .or_else(|| args.get(index).cloned());
            if let Some(value) = value {
                saved.push((param.clone(), self.scope.vars.insert(param.clone(), value)));
            }
        }
        let outer_returns = std::mem::take(&mut self.returns);
        self.block(body);
        let returns = std::mem::replace(&mut self.returns, outer_returns);
        for (name, old) in saved {
            match old {
                Some(v) => self.scope.vars.insert(name, v),
                None => self.scope.vars.remove(&name),
            };
        }
        self.calls -= 1;
        Value::either(&returns)
    }

    /// Binds a target (a name, a tuple of names, `os.environ["X"]`) to a value.
    fn bind(&mut self, target: Node<'t>, value: Value) {
        match target.kind() {
            "identifier" => {
                self.scope.vars.insert(self.text(target).to_string(), value);
            }
            "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" => {
                let mut cursor = target.walk();
                let names: Vec<Node> = target.named_children(&mut cursor).collect();
                for (index, name) in names.into_iter().enumerate() {
                    let element = match &value.object {
                        Object::List(items) => items.get(index).cloned().unwrap_or_default(),
                        _ => value.element(),
                    };
                    self.bind(name, element);
                }
            }
            "subscript" => {
                let container = target.child_by_field_name("value").map(|v| self.callee(v));
                let key = target
                    .child_by_field_name("subscript")
                    .map(|k| self.expression(k));
                if let (Some(Some(container)), Some(key)) = (container, key) {
                    if container == "os.environ" {
                        if let Some(name) = key.consts.first() {
                            self.flow.exported.insert(name.clone(), value);
                        }
                        return;
                    }
                }
                self.absorb_into_container(target, &value);
            }
            "attribute" => self.absorb_into_container(target, &value),
            _ => {}
        }
    }

    /// `report["aws"] = secret`, `ctx.key = secret`: the container now holds the data.
    fn absorb_into_container(&mut self, target: Node<'t>, value: &Value) {
        if value.taint.is_empty() {
            return;
        }
        let mut root = target;
        while let Some(inner) = root
            .child_by_field_name("value")
            .or_else(|| root.child_by_field_name("object"))
        {
            root = inner;
        }
        if root.kind() == "identifier" {
            let name = self.text(root).to_string();
            if let Some(container) = self.scope.vars.get_mut(&name) {
                container.hold(value);
            }
        }
    }

    /// The full name a callee or module expression stands for, when it is known.
    fn callee(&mut self, node: Node<'t>) -> Option<String> {
        match node.kind() {
            "identifier" => match self.scope.vars.get(self.text(node)) {
                Some(Value {
                    object: Object::Module(name),
                    ..
                }) => Some(name.clone()),
                Some(_) => None,
                None => Some(self.text(node).to_string()),
            },
            "attribute" => {
                let object = node.child_by_field_name("object")?;
                let attribute = node.child_by_field_name("attribute")?;
                let base = self.callee(object)?;
                Some(format!("{base}.{}", self.text(attribute)))
            }
            "call" => match self.expression(node).object {
                Object::Module(name) => Some(name),
                _ => None,
            },
            _ => None,
        }
    }

    fn expression(&mut self, node: Node<'t>) -> Value {
        match node.kind() {
            "string" => self.string(node),
            "concatenated_string" => {
                let parts = self.children_values(node);
                Value::concat(&parts)
            }
            "integer" | "float" | "true" | "false" | "none" => Value::literal(self.text(node)),
            "identifier" => {
                let name = self.text(node);
                match self.scope.vars.get(name) {
                    Some(value) => value.clone(),
                    None if name == "__file__" => Value::literal("./skill.py"),
                    // `e = eval`: the alias is the function.
                    None if matches!(
                        name,
                        "eval" | "exec" | "compile" | "__import__" | "getattr" | "open"
                    ) =>
                    {
                        Value::object(Object::Module(name.to_string()))
                    }
                    // `map(chr, codes)`: text spelled as character codes.
                    None if name == "chr" => Value::unknown().tainted(Origin {
                        source: Source::Decoded,
                        what: "text spelled as character codes".into(),
                        at: self.place(node),
                    }),
                    None => Value::unknown(),
                }
            }
            "attribute" => {
                if let Some(name) = self.module_path(node) {
                    let at = self.place(node);
                    return match name.as_str() {
                        "sys.argv" => {
                            let argv = Value::from_source(Source::Input, "sys.argv", &at);
                            // A step of the skill that runs this script says what it is given.
                            match self.flow.arguments_of(self.code.file) {
                                Some(arguments) => {
                                    let mut items = vec![Value::literal(self.code.file)];
                                    items.extend(arguments.iter().cloned());
                                    let mut list = Value::list(items);
                                    list.absorb(&argv);
                                    list
                                }
                                None => argv,
                            }
                        }
                        _ if name.starts_with("request.")
                            || name.starts_with("flask.request")
                            || name.starts_with("bottle.request") =>
                        {
                            Value::from_source(
                                Source::Network,
                                format!("a request from the network (`{name}`)"),
                                &at,
                            )
                        }
                        "os.environ" => Value::from_source(
                            Source::Secret,
                            "the whole environment (os.environ)",
                            &at,
                        ),
                        "os.sep" => Value::literal("/"),
                        "sys.executable" => Value::literal("python3"),
                        _ => Value::object(Object::Module(name)),
                    };
                }
                let whole = self.text(node);
                if matches!(
                    whole,
                    "self.path" | "self.headers" | "self.rfile" | "self.requestline"
                ) {
                    let at = self.place(node);
                    return Value::from_source(
                        Source::Network,
                        format!("a request from the network (`{whole}`)"),
                        &at,
                    );
                }
                let object = node
                    .child_by_field_name("object")
                    .map_or_else(Value::unknown, |o| self.expression(o));
                object.derived()
            }
            "call" => self.call(node),
            "subscript" => self.subscript(node),
            "list" | "tuple" | "set" | "expression_list" => {
                // `["kubectl", *args]`: a spread list's items are the list's.
                let mut cursor = node.walk();
                let spread: Vec<bool> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "comment")
                    .map(|c| c.kind() == "list_splat")
                    .collect();
                let mut items = Vec::new();
                for (value, spread) in self.children_values(node).into_iter().zip(spread) {
                    match value.object {
                        Object::List(inner) if spread => items.extend(inner),
                        _ => items.push(value),
                    }
                }
                Value::list(items)
            }
            "list_comprehension" | "generator_expression" | "set_comprehension"
                if node.child_by_field_name("body").is_some() =>
            {
                self.comprehension(node)
            }
            "list_comprehension"
            | "generator_expression"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "pair"
            | "comparison_operator"
            | "not_operator"
            | "unary_operator"
            | "lambda"
            | "keyword_argument" => {
                let parts = self.children_values(node);
                let mut out = Value::unknown();
                for p in &parts {
                    out.absorb(p);
                }
                out
            }
            "dictionary" => {
                // Its values, so a look-up in a table of literals is a literal.
                let mut cursor = node.walk();
                let entries: Vec<Node> = node.named_children(&mut cursor).collect();
                let values: Vec<Value> = entries
                    .into_iter()
                    .filter(|e| e.kind() != "comment")
                    .map(|e| match e.child_by_field_name("value") {
                        Some(value) if e.kind() == "pair" => self.expression(value),
                        _ => self.expression(e),
                    })
                    .collect();
                let mut out = Value::either(&values);
                out.consts.clear();
                out.object = Object::List(values);
                out
            }
            "binary_operator" | "boolean_operator" => self.binary(node),
            "conditional_expression" => {
                let parts = self.children_values(node);
                Value::either(&parts)
            }
            "parenthesized_expression" | "await" | "as_pattern" | "starred" | "list_splat" => node
                .named_child(0)
                .map_or_else(Value::unknown, |n| self.expression(n)),
            "assignment" | "augmented_assignment" | "named_expression" => self.assignment(node),
            // A generator's `yield x` is what a loop over its call gets, as a return would be.
            "yield" => {
                let mut yielded = Value::unknown();
                for value in self.children_values(node) {
                    yielded = value;
                }
                self.returns.push(yielded);
                Value::unknown()
            }
            _ => {
                let parts = self.children_values(node);
                let mut out = Value::unknown();
                for p in &parts {
                    out.absorb(p);
                }
                out
            }
        }
    }

    /// `[Path(t) for t in TARGETS]`: the body, with each loop name bound to an element, is
    /// the one item the list is known by (so a loop over it gets the names the body makes).
    fn comprehension(&mut self, node: Node<'t>) -> Value {
        let mut cursor = node.walk();
        let clauses: Vec<Node> = node.named_children(&mut cursor).collect();
        let mut origins = Value::unknown();
        for clause in clauses {
            match clause.kind() {
                "for_in_clause" => {
                    let iterable = clause
                        .child_by_field_name("right")
                        .map_or_else(Value::unknown, |r| self.expression(r));
                    if let Some(left) = clause.child_by_field_name("left") {
                        self.bind(left, iterable.element());
                    }
                }
                "if_clause" => {
                    for value in self.children_values(clause) {
                        origins.absorb(&value);
                    }
                }
                _ => {}
            }
        }
        let body = node
            .child_by_field_name("body")
            .map_or_else(Value::unknown, |b| self.expression(b));
        let mut out = body.derived();
        out.absorb(&origins);
        out.object = Object::List(vec![body]);
        out
    }

    fn assignment(&mut self, node: Node<'t>) -> Value {
        let right = node
            .child_by_field_name("right")
            .or_else(|| node.child_by_field_name("value"))
            .map_or_else(Value::unknown, |r| self.expression(r));
        let Some(left) = node
            .child_by_field_name("left")
            .or_else(|| node.child_by_field_name("name"))
        else {
            return right;
        };
        let value = if node.kind() == "augmented_assignment" {
            let old = self.expression(left);
            Value::concat(&[old, right])
        } else {
            right
        };
        self.bind(left, value.clone());
        value
    }

    /// The module path an attribute names (`os.path.join`), when its root is a module.
    fn module_path(&mut self, node: Node<'t>) -> Option<String> {
        let object = node.child_by_field_name("object")?;
        let attribute = node.child_by_field_name("attribute")?;
        let base = match object.kind() {
            "identifier" => match self.scope.vars.get(self.text(object)) {
                Some(Value {
                    object: Object::Module(name),
                    ..
                }) => name.clone(),
                _ => return None,
            },
            "attribute" => self.module_path(object)?,
            _ => return None,
        };
        Some(format!("{base}.{}", self.text(attribute)))
    }

    fn children_values(&mut self, node: Node<'t>) -> Vec<Value> {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        children
            .into_iter()
            .filter(|c| c.kind() != "comment")
            .map(|c| self.expression(c))
            .collect()
    }

    fn string(&mut self, node: Node<'t>) -> Value {
        let mut parts = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "string_content" | "escape_sequence" => {
                    parts.push(Value::literal(self.text(child)));
                }
                "interpolation" => {
                    let value = child
                        .child_by_field_name("expression")
                        .map_or_else(Value::unknown, |e| self.expression(e));
                    parts.push(value);
                }
                _ => {}
            }
        }
        if parts.is_empty() {
            return Value::literal("");
        }
        Value::concat(&parts)
    }

    fn binary(&mut self, node: Node<'t>) -> Value {
        let left = node
            .child_by_field_name("left")
            .map_or_else(Value::unknown, |l| self.expression(l));
        let right = node
            .child_by_field_name("right")
            .map_or_else(Value::unknown, |r| self.expression(r));
        let operator = node
            .child_by_field_name("operator")
            .map(|o| self.text(o).to_string())
            .unwrap_or_default();
        match operator.as_str() {
            "or" => Value::or_else(&left, &right),
            "and" => {
                let mut out = left.derived();
                out.absorb(&right);
                out
            }
            "+" => match (&left.object, &right.object) {
                // `a + b` of two lists is a list of both lists' items.
                (Object::List(a), Object::List(b)) => {
                    let items: Vec<Value> = a.iter().chain(b).cloned().collect();
                    Value::list(items)
                }
                _ => Value::concat(&[left, right]),
            },
            "/" if left.shape() != "*" => Value::concat(&[left, Value::literal("/"), right]),
            "%" if left.literal => {
                let mut parts = vec![left];
                match right.object {
                    Object::List(items) => parts.extend(items),
                    _ => parts.push(right),
                }
                format_value(parts)
            }
            _ => {
                let mut out = left.derived();
                out.absorb(&right);
                out.built = left.built || right.built;
                out
            }
        }
    }

    fn subscript(&mut self, node: Node<'t>) -> Value {
        let container_node = node.child_by_field_name("value");
        let key = node
            .child_by_field_name("subscript")
            .map_or_else(Value::unknown, |k| self.expression(k));
        if let Some(container_node) = container_node {
            if self.callee(container_node).as_deref() == Some("os.environ") {
                let at = self.place(node);
                if let Some(name) = key.consts.first() {
                    return self.flow.read_env(name, &at);
                }
                return Value::from_source(
                    Source::Secret,
                    "the whole environment (os.environ)",
                    &at,
                );
            }
            let container = self.expression(container_node);
            if let Object::List(items) = &container.object {
                let index = key.consts.first().and_then(|i| i.parse::<usize>().ok());
                return match index.and_then(|i| items.get(i)) {
                    Some(item) => item.clone(),
                    None => Value::either(items),
                };
            }
            return container.derived();
        }
        Value::unknown()
    }

    fn call(&mut self, node: Node<'t>) -> Value {
        let at = self.place(node);
        let function = node.child_by_field_name("function");
        let (positional, keywords) = match node.child_by_field_name("arguments") {
            Some(arguments) => self.arguments(arguments),
            None => (Vec::new(), Vec::new()),
        };
        let keyword = |name: &str| {
            keywords
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let first = positional.first().cloned().unwrap_or_default();
        let name = function.and_then(|f| self.callee(f));
        // A connection the pass made (`s = smtplib.SMTP(…)`) answers methods, as a value does.
        let on_connection = name
            .as_deref()
            .is_some_and(|n| n.starts_with("socket.socket."));
        // A method on a value: `x.read()`, `f.write(d)`, `s.format(a)`.
        if name.is_none()
            || on_connection
            || matches!(function.map(|f| f.kind()), Some("attribute"))
                && !self.is_module_call(function)
        {
            if let Some(function) = function.filter(|f| f.kind() == "attribute") {
                let receiver = function
                    .child_by_field_name("object")
                    .map_or_else(Value::unknown, |o| self.expression(o));
                let method = function
                    .child_by_field_name("attribute")
                    .map(|a| self.text(a).to_string())
                    .unwrap_or_default();
                let result = self.method(&receiver, &method, &positional, &keywords, &at);
                // `msg.add_attachment(data)`, `files.append(key)`: the object now holds the data.
                if let Some(object) = function.child_by_field_name("object") {
                    self.absorb_into_container(object, &Value::either(&positional).derived());
                }
                return result;
            }
            let mut out = Value::unknown();
            for arg in &positional {
                out.absorb(arg);
            }
            // A function reached by a hidden name (`getattr(b, "".join(map(chr, …)))`).
            if let Some(function) =
                function.filter(|f| matches!(f.kind(), "call" | "subscript" | "identifier"))
            {
                let callee = self.expression(function);
                if let Some(origin) = callee.origin(Source::Decoded) {
                    self.flow.emit(
                        &at,
                        Hit {
                            rule: "obfuscation.hidden-call",
                            category: Category::Obfuscation,
                            risk: Risk::High,
                            message: format!("calls a function whose name is hidden as encoded text (line {}), so a reader cannot tell what runs: delete it", origin.at.line),
                            source: Some(origin.at.clone()),
                        },
                    );
                    self.flow
                        .run_code(&out, "Python (through the hidden function)", &at);
                }
            }
            return out;
        }
        let name = name.unwrap_or_default();
        if let Some((params, body)) = self.functions.get(&name).cloned() {
            return self.call_function(&params, body, &positional, &keywords);
        }
        let name = name.strip_prefix("builtins.").unwrap_or(&name).to_string();
        let mut all: Vec<&Value> = positional.iter().collect();
        all.extend(keywords.iter().map(|(_, v)| v));
        let short = name.rsplit('.').next().unwrap_or(&name);
        if EVALS.contains(&name.as_str()) {
            self.flow.run_code(&first, "Python", &at);
            if let Some(text) = first.consts.first().filter(|_| first.assembled) {
                analyze_nested(self.flow, self.code, Language::Python, text, at.line);
            }
            return Value::unknown();
        }
        let unsafe_yaml = name == "yaml.load"
            && keyword("Loader").is_none_or(|l| !l.consts.iter().any(|c| c.contains("Safe")));
        // Loaders that unpickle a file by its path: `torch.load` does unless `weights_only`.
        let pickled_file = match name.as_str() {
            "torch.load" => keyword("weights_only")
                .is_some_and(|w| w.consts.first().is_some_and(|c| c == "False")),
            "joblib.load" | "pandas.read_pickle" | "pd.read_pickle" => true,
            "numpy.load" | "np.load" => keyword("allow_pickle")
                .is_some_and(|w| w.consts.first().is_some_and(|c| c == "True")),
            _ => false,
        };
        if UNPICKLES.contains(&name.as_str()) || unsafe_yaml || pickled_file {
            let mut data = first.clone();
            if pickled_file {
                data.absorb(&self.flow.read_path(&first, &at));
            }
            if data.origin(Source::Network).is_some() || data.origin(Source::Decoded).is_some() {
                self.flow
                    .run_code(&data, "a pickle (which runs code as it loads)", &at);
            }
            return data.derived();
        }
        if matches!(name.as_str(), "textwrap.dedent" | "inspect.cleandoc") {
            let mut out = first.clone();
            out.consts = first.consts.iter().map(|text| dedent(text)).collect();
            return out;
        }
        if MAIL_READERS.contains(&name.as_str()) {
            let mut mail = Value::from_source(Source::Input, "an email someone sent", &at);
            mail.absorb(&first);
            return mail;
        }
        if DOWNLOADS.contains(&name.as_str()) {
            // The file lands where its second argument says, or in a cache; the call returns
            // its path.
            let path = match positional.get(1).filter(|_| !name.contains("hf_hub")) {
                Some(target) if !target.consts.is_empty() => target.clone(),
                _ => Value::literal(format!("/tmp/download-{}-{}", at.file, at.line)),
            };
            let fetched = Value::from_source(
                Source::Network,
                format!("the file `{short}()` downloads"),
                &at,
            );
            self.flow.write_path(&path, &fetched, false, &at);
            return path;
        }
        if SPAWNS.contains(&name.as_str()) || SHELL_CALLS.contains(&name.as_str()) {
            let program = match &first.object {
                Object::List(argv) => argv.first().cloned().unwrap_or_default(),
                _ => first.clone(),
            };
            if self.stdio_on_socket && program.consts.iter().any(|p| is_shell_program(p)) {
                self.flow.reverse_shell(
                    "starts a shell whose input and output are a network connection",
                    &at,
                );
            }
        }
        if SHELL_CALLS.contains(&name.as_str()) {
            return shell_string(self.flow, self.code, &first, &at);
        }
        if SPAWNS.contains(&name.as_str()) {
            let shell = keyword("shell")
                .is_some_and(|s| s.consts.first().is_some_and(|c| c == "True"))
                || name.ends_with("_shell");
            match (&first.object, shell) {
                (Object::List(argv), false) => {
                    let argv = argv.clone();
                    return shell::run_argv(self.flow, self.code, &argv, &at);
                }
                (Object::List(argv), true) => {
                    let joined = Value::concat(
                        &argv
                            .iter()
                            .flat_map(|a| [a.clone(), Value::literal(" ")])
                            .collect::<Vec<_>>(),
                    );
                    return shell_string(self.flow, self.code, &joined, &at);
                }
                (_, true) => return shell_string(self.flow, self.code, &first, &at),
                (_, false) if !first.consts.is_empty() => {
                    return shell::run_argv(self.flow, self.code, &positional, &at);
                }
                _ => {}
            }
            return first.derived();
        }
        if name == "open" || name == "io.open" || name == "codecs.open" || name == "os.open" {
            let mode = positional
                .get(1)
                .cloned()
                .or_else(|| keyword("mode"))
                .and_then(|m| m.consts.first().cloned())
                .unwrap_or_default();
            let write = mode.contains(['w', 'a', 'x', '+']);
            let mut out = if write {
                Value::unknown()
            } else {
                self.flow.read_path(&first, &at)
            };
            out.object = Object::File {
                path: Box::new(first.clone()),
                write,
                append: mode.contains('a'),
            };
            return out;
        }
        if name == "getattr" {
            let attribute = positional.get(1).cloned().unwrap_or_default();
            if let (
                Some(Value {
                    object: Object::Module(module),
                    ..
                }),
                Some(attr),
            ) = (positional.first(), attribute.consts.first())
            {
                return Value::object(Object::Module(format!("{module}.{attr}")));
            }
            let mut out = first.derived();
            out.absorb(&attribute);
            return out;
        }
        if name == "__import__" || name == "importlib.import_module" {
            if let Some(module) = first.consts.first() {
                return Value::object(Object::Module(module.clone()));
            }
            return Value::unknown();
        }
        if matches!(name.as_str(), "os.getenv" | "os.environ.get" | "os.getenvb") {
            return match first.consts.first() {
                Some(var) => self.flow.read_env(var, &at),
                None => Value::unknown(),
            };
        }
        if matches!(
            name.as_str(),
            "os.environ.copy" | "os.environ.items" | "os.environ.values"
        ) {
            return Value::from_source(Source::Secret, "the whole environment (os.environ)", &at);
        }
        if name == "input"
            || name == "sys.stdin.read"
            || name == "sys.stdin.readline"
            || name.ends_with("parse_args")
            || name == "getpass.getpass"
        {
            return Value::from_source(Source::Input, format!("`{name}()`"), &at);
        }
        if matches!(
            name.as_str(),
            "pathlib.Path.home" | "Path.home" | "os.path.expanduser"
        ) && positional.is_empty()
        {
            return Value::literal("~");
        }
        if matches!(name.as_str(), "glob.glob" | "glob.iglob") {
            return listing(&first, false);
        }
        if matches!(name.as_str(), "os.listdir" | "os.scandir" | "os.walk") {
            return listing(&first, true);
        }
        if matches!(
            name.as_str(),
            "print" | "sys.stdout.write" | "pprint.pprint"
        ) {
            for arg in &all {
                self.printed.absorb(arg);
            }
            return Value::unknown();
        }
        if matches!(name.as_str(), "pyperclip.paste" | "clipboard.paste") {
            return Value::from_source(Source::Secret, "the clipboard", &at);
        }
        if matches!(name.as_str(), "os.getcwd" | "pathlib.Path.cwd" | "Path.cwd") {
            return Value::literal(".");
        }
        if matches!(
            name.as_str(),
            "tempfile.gettempdir"
                | "tempfile.mkdtemp"
                | "tempfile.mkstemp"
                | "tempfile.NamedTemporaryFile"
        ) {
            return Value::concat(&[Value::literal("/tmp/"), Value::unknown()]);
        }
        if name == "os.dup2" && first.object == Object::Module("socket.socket".into()) {
            self.stdio_on_socket = true;
            return Value::unknown();
        }
        if PATH_OF.contains(&name.as_str()) {
            if positional.len() > 1 {
                return join_path(&positional);
            }
            return first;
        }
        if PATH_JOINS.contains(&name.as_str()) {
            return join_path(&positional);
        }
        if ENCODES.contains(&name.as_str()) {
            return self.flow.encode(&first, &format!("`{name}`"), &at);
        }
        if DECODES.contains(&name.as_str()) || name == "chr" {
            return first.derived().tainted(Origin {
                source: Source::Decoded,
                what: format!("text hidden by `{short}`"),
                at: at.clone(),
            });
        }
        if FETCHES.contains(&name.as_str()) {
            self.flow.send(&format!("`{name}`"), &all, &at);
            if name.ends_with("urlretrieve") {
                if let Some(target) = positional.get(1) {
                    let fetched = Value::from_source(Source::Network, url_of(&first), &at);
                    self.flow.write_path(target, &fetched, false, &at);
                }
            }
            return Value::from_source(Source::Network, url_of(&first), &at);
        }
        if SENDS.contains(&name.as_str()) {
            self.flow.send(&format!("`{name}`"), &all, &at);
            let mut out = Value::from_source(Source::Network, url_of(&first), &at);
            out.object = Object::Module("socket.socket".into());
            return out;
        }
        if RESOLVES.contains(&name.as_str()) {
            self.flow.send("a DNS look-up", &all, &at);
            return Value::unknown();
        }
        if matches!(
            name.as_str(),
            "socket.socket"
                | "http.client.HTTPConnection"
                | "http.client.HTTPSConnection"
                | "ssl.wrap_socket"
                | "telnetlib.Telnet"
        ) {
            return Value::object(Object::Module("socket.socket".into()));
        }
        if COPIES.contains(&name.as_str()) {
            if let (Some(source), Some(destination)) = (positional.first(), positional.get(1)) {
                let data = self.flow.read_path(source, &at);
                self.flow.copy(&data, destination, &at);
            }
            return Value::unknown();
        }
        if name == "shutil.make_archive" {
            if let Some(base) = positional.first() {
                let root = positional
                    .get(2)
                    .cloned()
                    .or_else(|| keyword("root_dir"))
                    .unwrap_or_default();
                let data = self.flow.read_path(&root, &at);
                let archive = Value::concat(&[base.clone(), Value::literal(".zip")]);
                self.flow.copy(&data, &archive, &at);
                self.flow.copy(&data, base, &at);
            }
            return first.derived();
        }
        if REMOVES.contains(&name.as_str()) {
            self.flow.remove(&first, &at);
            return Value::unknown();
        }
        if matches!(
            name.as_str(),
            "Crypto.Cipher.AES.new"
                | "Cryptodome.Cipher.AES.new"
                | "cryptography.fernet.Fernet"
                | "cryptography.hazmat.primitives.ciphers.Cipher"
                | "pyAesCrypt.encryptFile"
        ) {
            self.flow.cipher(&at);
        }
        if matches!(
            name.as_str(),
            "zipfile.ZipFile" | "tarfile.open" | "tarfile.TarFile"
        ) {
            let mode = positional
                .get(1)
                .cloned()
                .or_else(|| keyword("mode"))
                .and_then(|m| m.consts.first().cloned())
                .unwrap_or_default();
            return Value::object(Object::File {
                path: Box::new(first.clone()),
                write: mode.contains(['w', 'a', 'x']),
                append: false,
            });
        }
        if matches!(
            name.as_str(),
            "json.dumps"
                | "json.loads"
                | "str"
                | "bytes"
                | "repr"
                | "dict"
                | "list"
                | "sorted"
                | "bytearray"
                | "json.dump"
        ) {
            let mut out = Value::unknown();
            for arg in &all {
                out.absorb(arg);
            }
            if name == "json.dump" {
                if let Some(Value {
                    object:
                        Object::File {
                            path,
                            write: true,
                            append,
                        },
                    ..
                }) = positional.get(1)
                {
                    self.flow.write_path(path, &first, *append, &at);
                }
            }
            return out;
        }
        // An unknown call: its result carries its arguments' origins.
        let mut out = Value::unknown();
        for arg in &all {
            out.absorb(arg);
        }
        out
    }

    fn is_module_call(&mut self, function: Option<Node<'t>>) -> bool {
        function
            .filter(|f| f.kind() == "attribute")
            .and_then(|f| f.child_by_field_name("object"))
            .is_some_and(|o| match o.kind() {
                "identifier" => matches!(
                    self.scope.vars.get(self.text(o)),
                    Some(Value {
                        object: Object::Module(_),
                        ..
                    }) | None
                ),
                "attribute" => self.module_path(o).is_some(),
                "call" => matches!(self.expression(o).object, Object::Module(_)),
                _ => false,
            })
    }

    fn method(
        &mut self,
        receiver: &Value,
        method: &str,
        positional: &[Value],
        keywords: &[(String, Value)],
        at: &Place,
    ) -> Value {
        let first = positional.first().cloned().unwrap_or_default();
        let mut all: Vec<&Value> = positional.iter().collect();
        all.extend(keywords.iter().map(|(_, v)| v));
        match (method, &receiver.object) {
            (
                "read" | "readlines" | "readline" | "read_text" | "read_bytes" | "__iter__",
                Object::File {
                    path, write: false, ..
                },
            ) => {
                let mut out = self.flow.read_path(path, at);
                out.absorb(receiver);
                out
            }
            // A path known by its text or its shape (`/tmp/.state-*/tokens`).
            ("read_text" | "read_bytes" | "open", _) if receiver.shape() != "*" => {
                let mut out = self.flow.read_path(receiver, at);
                if method == "open" {
                    let mode = first.consts.first().cloned().unwrap_or_default();
                    let write = mode.contains(['w', 'a', 'x', '+']);
                    if write {
                        out = Value::unknown();
                    }
                    out.object = Object::File {
                        path: Box::new(receiver.clone()),
                        write,
                        append: mode.contains('a'),
                    };
                }
                out
            }
            (
                "write" | "writelines" | "add" | "writestr",
                Object::File {
                    path,
                    write: true,
                    append,
                },
            ) => {
                let mut data = first.clone();
                data.absorb(&self.flow.read_path(&first, at));
                if method == "writestr" {
                    data.absorb(positional.get(1).unwrap_or(&Value::unknown()));
                }
                let path = (**path).clone();
                self.flow.write_path(&path, &data, *append, at);
                Value::unknown()
            }
            (
                "extractall" | "extract",
                Object::File {
                    path, write: false, ..
                },
            ) => {
                let data = self.flow.read_path(path, at);
                // tarfile keeps `../` and absolute names unless a filter says otherwise.
                let filtered = keywords
                    .iter()
                    .any(|(k, _)| k == "filter" || k == "members");
                if let (Some(origin), false) = (data.origin(Source::Network), filtered) {
                    self.flow.emit(
                        at,
                        Hit {
                            rule: "path-escape.archive",
                            category: Category::PathEscape,
                            risk: Risk::High,
                            message: format!("extracts an archive fetched from {} (line {}) with no filter on its entries, so an entry named `../../.bashrc` or `/etc/…` is written outside the folder: pass `filter=\"data\"`, or check each name", origin.what, origin.at.line),
                            source: Some(origin.at.clone()),
                        },
                    );
                }
                let destination = if first.consts.is_empty() && first.shape.is_none() {
                    Value::literal(".")
                } else {
                    first.clone()
                };
                self.flow.copy(&data, &destination, at);
                Value::unknown()
            }
            ("unlink" | "rmdir", _) if receiver.object == Object::Plain => {
                self.flow.remove(receiver, at);
                Value::unknown()
            }
            ("write_text" | "write_bytes", _) => {
                self.flow.write_path(receiver, &first, false, at);
                Value::unknown()
            }
            (
                "send" | "sendall" | "sendto" | "sendmail" | "send_message" | "storbinary"
                | "request" | "post" | "put" | "connect" | "connect_ex" | "write",
                Object::Module(m),
            ) if m == "socket.socket" => {
                let host = match &first.object {
                    Object::List(address) => address.first().cloned().unwrap_or_default(),
                    _ => first.clone(),
                };
                if method.starts_with("connect")
                    && host.built
                    && super::flow::sweeps_addresses(self.code.text)
                {
                    self.flow.scan(at);
                } else {
                    self.flow.send("a network connection", &all, at);
                }
                Value::unknown()
            }
            ("post" | "put" | "patch", _) => {
                self.flow.send(&format!("`.{method}()`"), &all, at);
                Value::from_source(Source::Network, url_of(&first), at)
            }
            ("get", _) if first.consts.first().is_some_and(|u| u.starts_with("http")) => {
                self.flow.send(&format!("`.{method}()`"), &all, at);
                Value::from_source(Source::Network, url_of(&first), at)
            }
            (
                "execute" | "executemany" | "executescript" | "raw" | "read_sql" | "read_sql_query"
                | "mogrify",
                _,
            ) => {
                self.flow.query(&first, at);
                receiver.derived()
            }
            ("format" | "format_map", _) if receiver.literal => {
                let mut parts = vec![receiver.clone()];
                parts.extend(positional.iter().cloned());
                parts.extend(keywords.iter().map(|(_, v)| v.clone()));
                format_value(parts)
            }
            ("join", _) if receiver.literal => {
                let separator = receiver.clone();
                match &first.object {
                    Object::List(items) => {
                        let mut parts = Vec::new();
                        for (index, item) in items.iter().enumerate() {
                            if index > 0 {
                                parts.push(separator.clone());
                            }
                            parts.push(item.clone());
                        }
                        Value::concat(&parts)
                    }
                    _ => first.derived(),
                }
            }
            ("joinpath", _) => {
                let mut parts = vec![receiver.clone()];
                parts.extend(positional.iter().cloned());
                join_path(&parts)
            }
            ("glob" | "rglob" | "iterdir", _) if receiver.shape() != "*" => {
                let pattern = match first.consts.first() {
                    Some(_) => {
                        Value::concat(&[receiver.clone(), Value::literal("/"), first.clone()])
                    }
                    None => Value::concat(&[receiver.clone(), Value::literal("/*")]),
                };
                listing(&pattern, false)
            }
            (
                "expanduser" | "resolve" | "absolute" | "strip" | "rstrip" | "lstrip" | "lower"
                | "upper",
                _,
            ) => {
                let mut out = receiver.clone();
                out.object = Object::Plain;
                out
            }
            ("hex", _) => self.flow.encode(receiver, "`.hex()`", at),
            ("encode", _)
                if first
                    .consts
                    .iter()
                    .any(|c| c.contains("rot") || c.contains("base64") || c.contains("hex")) =>
            {
                self.flow
                    .encode(receiver, &format!("`.encode({})`", first.consts[0]), at)
            }
            ("decode", _)
                if first
                    .consts
                    .iter()
                    .any(|c| c.contains("rot") || c.contains("base64") || c.contains("hex")) =>
            {
                receiver.derived().tainted(Origin {
                    source: Source::Decoded,
                    what: "encoded text".into(),
                    at: at.clone(),
                })
            }
            ("fileno" | "makefile", Object::Module(m)) if m == "socket.socket" => receiver.clone(),
            ("system" | "popen", Object::Module(_)) => {
                shell_string(self.flow, self.code, &first, at)
            }
            _ => {
                let mut out = receiver.derived();
                for arg in &all {
                    out.absorb(arg);
                }
                out
            }
        }
    }

    /// A command string handed to a shell: a finding when built from data, and read as shell
    /// when its text is known.
    fn arguments(&mut self, node: Node<'t>) -> (Vec<Value>, Vec<(String, Value)>) {
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.kind() == "keyword_argument" {
                let name = child
                    .child_by_field_name("name")
                    .map(|n| self.text(n).to_string())
                    .unwrap_or_default();
                let value = child
                    .child_by_field_name("value")
                    .map_or_else(Value::unknown, |v| self.expression(v));
                keywords.push((name, value));
            } else if child.kind() != "comment" {
                positional.push(self.expression(child));
            }
        }
        (positional, keywords)
    }

    /// `while True:` with no way out, doing something that grows or forks each time.
    fn endless_loop(&mut self, node: Node<'t>) {
        let Some(condition) = node.child_by_field_name("condition") else {
            return;
        };
        if !matches!(self.text(condition).trim(), "True" | "1" | "not False") {
            return;
        }
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let body_text = self.text(body);
        let exits = [
            "break", "return", "raise", "sys.exit", "exit(", "os._exit", "quit(",
        ]
        .iter()
        .any(|w| body_text.contains(w));
        if exits {
            return;
        }
        let forks = [
            "os.fork(",
            "Popen(",
            "Process(",
            "Thread(",
            "subprocess.",
            "os.system(",
        ]
        .iter()
        .any(|w| body_text.contains(w));
        let grows = [
            ".append(",
            ".extend(",
            "+=",
            "*=",
            ".write(",
            "bytearray(",
            "os.makedirs(",
            "mkdir(",
        ]
        .iter()
        .any(|w| body_text.contains(w));
        if forks || grows {
            let at = self.place(node);
            self.flow.endless_loop(&at, forks);
        }
    }

    /// A function that calls itself with nothing that could stop it.
    fn unbounded_recursion(&mut self, name: &str, body: Node<'t>, at: &Place) {
        if name.is_empty() {
            return;
        }
        let text = self.text(body);
        let calls_itself = text.contains(&format!("{name}("));
        let can_stop = [
            "if ", "if(", "while ", "for ", "try:", " else ", "raise", "yield", "sys.exit",
            "return\n",
        ]
        .iter()
        .any(|w| text.contains(w))
            || text
                .lines()
                .any(|l| l.trim().starts_with("return ") && !l.contains(&format!("{name}(")));
        if calls_itself && !can_stop {
            self.flow.unbounded_recursion(name, at);
        }
    }
}

/// `/bin/sh`, `bash`, `cmd.exe`: a program that is a shell.
pub(super) fn is_shell_program(program: &str) -> bool {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    matches!(
        base,
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ash"
            | "ksh"
            | "cmd.exe"
            | "powershell"
            | "pwsh"
            | "powershell.exe"
    )
}

/// `text` without the indentation its lines share, as `textwrap.dedent` gives it.
fn dedent(text: &str) -> String {
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The entries of a folder or a glob, as a value whose shape is the pattern.
fn listing(pattern: &Value, folder: bool) -> Value {
    let pattern = if folder {
        Value::concat(&[pattern.clone(), Value::literal("/*")])
    } else {
        pattern.clone()
    };
    // Its entries go by the pattern's names: an entry of `~/.ssh/*` is a file of `~/.ssh`.
    let mut out = pattern.derived();
    out.consts = pattern.consts.clone();
    out.shape = Some(pattern.shape().to_string());
    out
}

/// `"…%s…" % x`, `"…{}…".format(x)`: the values are put into the text.
fn format_value(parts: Vec<Value>) -> Value {
    let mut out = Value::concat(&parts);
    out.consts.clear();
    if parts.iter().skip(1).any(|p| !p.literal) {
        out.built = true;
        out.literal = false;
    }
    out
}

fn join_path(parts: &[Value]) -> Value {
    let mut pieces = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            pieces.push(Value::literal("/"));
        }
        pieces.push(part.clone());
    }
    Value::concat(&pieces)
}

fn url_of(value: &Value) -> String {
    match value.shape() {
        "*" => "a URL".into(),
        shape => unquote(shape).to_string(),
    }
}
