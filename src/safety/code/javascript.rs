//! JavaScript (Node): `require` and `import` with their aliases and destructuring, calls by
//! their full name (`cp.exec` is `child_process.exec`), and the values between them, as `flow`
//! operations.

use std::collections::HashMap;

use tree_sitter::Node;

use super::flow::{Flow, Hit};
use super::value::{Object, Origin, Place, Source, Value};
use super::{shell, shell_string, unquote, Code, Scope};
use crate::safety::{Category, Risk};

/// Walks a JavaScript or TypeScript tree; returns what it prints.
pub(super) fn walk(flow: &mut Flow, scope: &mut Scope, code: &Code, root: Node) -> Value {
    let mut walker = Walker {
        flow,
        scope,
        code,
        functions: HashMap::new(),
        returns: Vec::new(),
        calls: 0,
        callbacks: Vec::new(),
        resolved: Vec::new(),
        printed: Value::unknown(),
    };
    walker.hoist(root);
    walker.statement(root);
    walker.printed
}

struct Walker<'f, 's, 'c, 't> {
    flow: &'f mut Flow,
    scope: &'s mut Scope,
    code: &'c Code<'c>,
    /// The functions of the skill's own code, by name: a call runs the body with its arguments.
    functions: HashMap<String, Node<'t>>,
    /// What the function being run returns.
    returns: Vec<Value>,
    calls: usize,
    /// Callbacks given what a call fetched, run once the statement that made the call is done
    /// (`const sock = net.connect(…, () => sock.pipe(…))` runs after `sock` is bound).
    callbacks: Vec<(Node<'t>, Value)>,
    /// What the executor of the `new Promise` being run passed to `resolve`: the promise's
    /// value, which `await` gives.
    resolved: Vec<Value>,
    /// What the code prints (`console.log`, `process.stdout.write`).
    printed: Value,
}

/// How deep calls of a skill's own functions are followed.
const MAX_CALL_DEPTH: usize = 3;
/// The name the walker gives a promise executor's `resolve`.
const RESOLVE: &str = "promise:resolve";

const EVALS: &[&str] = &[
    "eval",
    "Function",
    "vm.runInNewContext",
    "vm.runInThisContext",
    "vm.runInContext",
    "vm.compileFunction",
    "vm.Script",
    "setTimeout",
    "setInterval",
];
/// Global functions an alias may stand for (`const r = require; r('child_process')`).
const GLOBAL_FUNCTIONS: &[&str] = &[
    "require",
    "eval",
    "Function",
    "fetch",
    "setTimeout",
    "setInterval",
    "atob",
    "btoa",
];
const SHELL_CALLS: &[&str] = &["child_process.exec", "child_process.execSync"];
const SPAWNS: &[&str] = &[
    "child_process.spawn",
    "child_process.spawnSync",
    "child_process.execFile",
    "child_process.execFileSync",
    "child_process.fork",
];
const READS: &[&str] = &[
    "fs.readFileSync",
    "fs.readFile",
    "fs.promises.readFile",
    "fs/promises.readFile",
    "fs.createReadStream",
    "fs.readdirSync",
];
/// Archive readers, given a file or a buffer.
const ARCHIVES: &[&str] = &[
    "adm-zip",
    "jszip.loadAsync",
    "yauzl.open",
    "yauzl.fromBuffer",
    "unzipper.Open.file",
    "unzipper.Open.buffer",
    "decompress",
    "node-stream-zip",
    "node-stream-zip.async",
];
const WRITES: &[&str] = &[
    "fs.writeFileSync",
    "fs.writeFile",
    "fs.promises.writeFile",
    "fs/promises.writeFile",
];
const APPENDS: &[&str] = &[
    "fs.appendFileSync",
    "fs.appendFile",
    "fs.promises.appendFile",
    "fs/promises.appendFile",
];
const COPIES: &[&str] = &[
    "fs.copyFileSync",
    "fs.copyFile",
    "fs.cpSync",
    "fs.cp",
    "fs.renameSync",
    "fs.rename",
    "fs.promises.copyFile",
    "fs/promises.copyFile",
    "fs.promises.cp",
];
const REMOVES: &[&str] = &[
    "fs.unlinkSync",
    "fs.unlink",
    "fs.promises.unlink",
    "fs.rmSync",
    "fs.rm",
    "fs.rmdirSync",
    "fs.promises.rm",
    "fs/promises.rm",
];
const PATH_JOINS: &[&str] = &[
    "path.join",
    "path.resolve",
    "path.posix.join",
    "path.normalize",
];
const FETCHES: &[&str] = &[
    "fetch",
    "axios",
    "axios.get",
    "https.get",
    "http.get",
    "got",
    "node-fetch",
    "undici.request",
    "axios.request",
];
const SENDS: &[&str] = &[
    "axios.post",
    "axios.put",
    "axios.patch",
    "got.post",
    "needle.post",
    "superagent.post",
];
const CONNECTIONS: &[&str] = &[
    "https.request",
    "http.request",
    "net.connect",
    "net.createConnection",
    "net.Socket",
    "tls.connect",
    "net.createServer",
    "tls.createServer",
    "http.createServer",
    "https.createServer",
    "dgram.createSocket",
    "WebSocket",
    "ws",
];
const RESOLVES: &[&str] = &[
    "dns.lookup",
    "dns.resolve",
    "dns.resolve4",
    "dns.resolve6",
    "dns.resolveTxt",
    "dns.promises.lookup",
    "dns.promises.resolve",
    "dns.promises.resolveTxt",
    "dns/promises.resolve",
    "dns/promises.lookup",
];

impl<'t> Walker<'_, '_, '_, 't> {
    fn place(&self, node: Node) -> Place {
        self.code.place(node)
    }

    fn text(&self, node: Node) -> &str {
        self.code.text_of(node)
    }

    fn statement(&mut self, node: Node<'t>) {
        self.statement_now(node);
        if matches!(
            node.kind(),
            "lexical_declaration" | "variable_declaration" | "expression_statement"
        ) {
            for (callback, value) in std::mem::take(&mut self.callbacks) {
                self.call_function(callback, std::slice::from_ref(&value));
            }
        }
    }

    fn statement_now(&mut self, node: Node<'t>) {
        match node.kind() {
            "import_statement" => self.import(node),
            "lexical_declaration" | "variable_declaration" => {
                let mut cursor = node.walk();
                let declarators: Vec<Node> = node.named_children(&mut cursor).collect();
                for declarator in declarators {
                    if declarator.kind() != "variable_declarator" {
                        continue;
                    }
                    let value_node = declarator.child_by_field_name("value");
                    let value = value_node.map_or_else(Value::unknown, |v| self.expression(v));
                    let Some(name) = declarator.child_by_field_name("name") else {
                        continue;
                    };
                    // `const run = (c) => cp.execSync(c)`: a call of `run` runs its body.
                    if let Some(function) = value_node.filter(|v| is_function(v)) {
                        self.functions.insert(self.text(name).to_string(), function);
                        continue;
                    }
                    self.bind(name, value);
                }
            }
            "function_declaration" | "generator_function_declaration" => {
                self.function(node);
            }
            "return_statement" => {
                if let Some(value) = node.named_child(0) {
                    let value = self.expression(value);
                    self.returns.push(value);
                }
            }
            "for_in_statement" => {
                let iterable = node
                    .child_by_field_name("right")
                    .map_or_else(Value::unknown, |r| self.expression(r));
                if let Some(left) = node.child_by_field_name("left") {
                    self.bind(left, iterable.element());
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body);
                }
            }
            "while_statement" | "do_statement" | "for_statement" => {
                self.endless_loop(node);
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.statement(child);
                }
            }
            "expression_statement" | "throw_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.expression(child);
                }
            }
            "comment" => {}
            "program"
            | "statement_block"
            | "if_statement"
            | "else_clause"
            | "try_statement"
            | "catch_clause"
            | "finally_clause"
            | "switch_statement"
            | "switch_body"
            | "switch_case"
            | "switch_default"
            | "labeled_statement"
            | "export_statement"
            | "class_declaration"
            | "class_body"
            | "method_definition"
            | "parenthesized_expression" => {
                if node.kind() == "method_definition" {
                    self.function(node);
                    return;
                }
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.statement(child);
                }
            }
            _ => {
                self.expression(node);
            }
        }
    }

    /// Function declarations are known before the code above them runs (JavaScript hoists them).
    fn hoist(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        let children: Vec<Node> = root.named_children(&mut cursor).collect();
        for child in children {
            let declaration = if child.kind() == "export_statement" {
                child.named_child(0)
            } else {
                Some(child)
            };
            if let Some(declaration) = declaration.filter(|d| d.kind() == "function_declaration") {
                if let Some(name) = declaration.child_by_field_name("name") {
                    self.functions
                        .insert(self.text(name).to_string(), declaration);
                }
            }
        }
    }

    fn import(&mut self, node: Node<'t>) {
        let Some(source) = node.child_by_field_name("source") else {
            return;
        };
        let module = module_name(self.text(source));
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "import_clause" | "named_imports" | "namespace_import" => {
                    let mut cursor = n.walk();
                    for child in n.named_children(&mut cursor) {
                        if child.kind() == "identifier" {
                            self.scope.vars.insert(
                                self.text(child).to_string(),
                                Value::object(Object::Module(module.clone())),
                            );
                        } else {
                            stack.push(child);
                        }
                    }
                }
                "import_specifier" => {
                    let name = n
                        .child_by_field_name("name")
                        .map(|c| self.text(c).to_string());
                    let alias = n
                        .child_by_field_name("alias")
                        .map(|c| self.text(c).to_string());
                    if let Some(name) = name {
                        self.scope.vars.insert(
                            alias.unwrap_or_else(|| name.clone()),
                            Value::object(Object::Module(format!("{module}.{name}"))),
                        );
                    }
                }
                "import_statement" => {
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
                _ => {}
            }
        }
    }

    /// Walks a function with its parameters as input; returns what it returns.
    fn function(&mut self, node: Node<'t>) -> Vec<Value> {
        let at = self.place(node);
        let name = node
            .child_by_field_name("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        if let Some(parameters) = node.child_by_field_name("parameters") {
            let mut stack = vec![parameters];
            while let Some(p) = stack.pop() {
                if p.kind() == "identifier" || p.kind() == "shorthand_property_identifier_pattern" {
                    let param = self.text(p).to_string();
                    self.scope
                        .vars
                        .insert(param.clone(), parameter_value(&param, &at));
                    continue;
                }
                let mut cursor = p.walk();
                stack.extend(p.named_children(&mut cursor));
            }
        } else if let Some(parameter) = node.child_by_field_name("parameter") {
            let param = self.text(parameter).to_string();
            self.scope
                .vars
                .insert(param.clone(), parameter_value(&param, &at));
        }
        if !name.is_empty() {
            self.functions.insert(name.clone(), node);
        }
        let saved = std::mem::take(&mut self.returns);
        if let Some(body) = node.child_by_field_name("body") {
            self.unbounded_recursion(&name, body, &at);
            self.run_body(body);
        }
        std::mem::replace(&mut self.returns, saved)
    }

    /// A function's body: a block, or an arrow function's expression (what it returns).
    fn run_body(&mut self, body: Node<'t>) {
        if body.kind() == "statement_block" {
            self.statement(body);
        } else {
            let value = self.expression(body);
            self.returns.push(value);
        }
    }

    /// Runs a function with its parameters bound to `args`; returns what it returns.
    fn call_function(&mut self, function: Node<'t>, args: &[Value]) -> Value {
        if self.calls >= MAX_CALL_DEPTH {
            let mut out = Value::unknown();
            for arg in args {
                out.absorb(arg);
            }
            return out;
        }
        self.calls += 1;
        let params: Vec<Node> = match function.child_by_field_name("parameters") {
            Some(parameters) => {
                let mut cursor = parameters.walk();
                parameters.named_children(&mut cursor).collect()
            }
            None => function
                .child_by_field_name("parameter")
                .into_iter()
                .collect(),
        };
        let saved: Vec<(String, Option<Value>)> = params
            .iter()
            .enumerate()
            .filter_map(|(index, p)| {
                // TypeScript wraps a parameter with its type (`required_parameter`).
                let name = match p.kind() {
                    "identifier" => *p,
                    "required_parameter" | "optional_parameter" => p
                        .child_by_field_name("pattern")
                        .filter(|n| n.kind() == "identifier")?,
                    _ => return None,
                };
                Some((index, name))
            })
            .map(|(index, p)| {
                let name = self.text(p).to_string();
                let value = args.get(index).cloned().unwrap_or_default();
                (name.clone(), self.scope.vars.insert(name, value))
            })
            .collect();
        let outer_returns = std::mem::take(&mut self.returns);
        if let Some(body) = function.child_by_field_name("body") {
            self.run_body(body);
        }
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

    fn bind(&mut self, target: Node<'t>, value: Value) {
        match target.kind() {
            "identifier" => {
                self.scope.vars.insert(self.text(target).to_string(), value);
            }
            "object_pattern" => {
                let mut cursor = target.walk();
                let parts: Vec<Node> = target.named_children(&mut cursor).collect();
                for part in parts {
                    let (key, name) = match part.kind() {
                        "shorthand_property_identifier_pattern" => {
                            (self.text(part).to_string(), Some(part))
                        }
                        "pair_pattern" => (
                            part.child_by_field_name("key")
                                .map(|k| self.text(k).to_string())
                                .unwrap_or_default(),
                            part.child_by_field_name("value"),
                        ),
                        _ => continue,
                    };
                    let element = match &value.object {
                        Object::Module(module) => {
                            Value::object(Object::Module(format!("{module}.{key}")))
                        }
                        _ if value.origin(Source::Secret).is_some()
                            && value.taint.len() == 1
                            && value.taint[0].what.starts_with("the whole environment") =>
                        {
                            self.flow.read_env(&key, &value.taint[0].at.clone())
                        }
                        _ => value.derived(),
                    };
                    if let Some(name) = name {
                        if name.kind() == "shorthand_property_identifier_pattern" {
                            self.scope.vars.insert(self.text(name).to_string(), element);
                        } else {
                            self.bind(name, element);
                        }
                    }
                }
            }
            "array_pattern" => {
                let mut cursor = target.walk();
                let names: Vec<Node> = target.named_children(&mut cursor).collect();
                for (index, name) in names.into_iter().enumerate() {
                    let element = match &value.object {
                        Object::List(items) => items.get(index).cloned().unwrap_or_default(),
                        _ => value.derived(),
                    };
                    self.bind(name, element);
                }
            }
            "member_expression" | "subscript_expression" => {
                if let Some(name) = self.env_name(target) {
                    self.flow.exported.insert(name, value);
                } else {
                    self.absorb_into_container(target, &value);
                }
            }
            _ => {}
        }
    }

    /// `report[k] = secret`, `ctx.key = secret`: the container now holds the data.
    fn absorb_into_container(&mut self, target: Node<'t>, value: &Value) {
        if value.taint.is_empty() {
            return;
        }
        let mut root = target;
        while let Some(inner) = root.child_by_field_name("object") {
            root = inner;
        }
        if root.kind() != "identifier" {
            return;
        }
        let name = self.text(root).to_string();
        if let Some(container) = self.scope.vars.get_mut(&name) {
            container.hold(value);
        }
    }

    /// The variable a `process.env.X` / `process.env["X"]` names.
    fn env_name(&mut self, node: Node<'t>) -> Option<String> {
        let object = node.child_by_field_name("object")?;
        if self.text(object).replace(' ', "") != "process.env" {
            return None;
        }
        match node.kind() {
            "member_expression" => {
                Some(self.text(node.child_by_field_name("property")?).to_string())
            }
            _ => {
                let index = node.child_by_field_name("index")?;
                self.expression(index).consts.first().cloned()
            }
        }
    }

    /// The full name a callee stands for (`child_process.exec`), when known.
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
            "member_expression" => {
                let object = node.child_by_field_name("object")?;
                let property = node.child_by_field_name("property")?;
                let base = self.callee(object)?;
                Some(format!("{base}.{}", self.text(property)))
            }
            "subscript_expression" => {
                let object = node.child_by_field_name("object")?;
                let index = node.child_by_field_name("index")?;
                let base = self.callee(object)?;
                let key = self.expression(index).consts.first().cloned()?;
                Some(format!("{base}.{key}"))
            }
            "call_expression" => match self.expression(node).object {
                Object::Module(name) => Some(name),
                _ => None,
            },
            "parenthesized_expression" | "await_expression" => self.callee(node.named_child(0)?),
            _ => None,
        }
    }

    fn is_module(&mut self, node: Node<'t>) -> bool {
        match node.kind() {
            "identifier" => matches!(
                self.scope.vars.get(self.text(node)),
                Some(Value {
                    object: Object::Module(_),
                    ..
                }) | None
            ),
            "member_expression" => node
                .child_by_field_name("object")
                .is_some_and(|o| self.is_module(o)),
            _ => false,
        }
    }

    fn expression(&mut self, node: Node<'t>) -> Value {
        match node.kind() {
            "string" => {
                let mut parts = Vec::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    parts.push(Value::literal(self.text(child)));
                }
                if parts.is_empty() {
                    return Value::literal("");
                }
                Value::concat(&parts)
            }
            "template_string" => {
                let mut parts = Vec::new();
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    if child.kind() == "template_substitution" {
                        let value = child
                            .named_child(0)
                            .map_or_else(Value::unknown, |e| self.expression(e));
                        parts.push(value);
                    } else {
                        parts.push(Value::literal(self.text(child)));
                    }
                }
                if parts.is_empty() {
                    return Value::literal("");
                }
                Value::concat(&parts)
            }
            "number" | "true" | "false" | "null" | "undefined" => Value::literal(self.text(node)),
            "identifier" => {
                let name = self.text(node);
                match self.scope.vars.get(name) {
                    Some(value) => value.clone(),
                    None if name == "__dirname" => Value::literal("./skill"),
                    None if name == "__filename" => Value::literal("./skill/index.js"),
                    // `const r = require`: the alias is the function.
                    None if GLOBAL_FUNCTIONS.contains(&name) => {
                        Value::object(Object::Module(name.to_string()))
                    }
                    // `const g = globalThis; g['ev' + 'al'](…)`: the global object's properties
                    // are the globals.
                    None if matches!(name, "globalThis" | "window" | "global" | "self") => {
                        Value::object(Object::Module(name.to_string()))
                    }
                    None => Value::unknown(),
                }
            }
            "member_expression" | "subscript_expression" => self.member(node),
            "call_expression" => self.call(node, false),
            "new_expression" => self.call(node, true),
            "binary_expression" => {
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
                if operator == "+" {
                    Value::concat(&[left, right])
                } else if matches!(operator.as_str(), "||" | "??") {
                    Value::or_else(&left, &right)
                } else {
                    let mut out = left.derived();
                    out.absorb(&right);
                    out
                }
            }
            "array" => {
                let items = self.children_values(node);
                Value::list(items)
            }
            // A table of literals (`{ created: 'created_at', … }`): a look-up in it is one of
            // them, as a list's item is.
            "object" => {
                let values = self.children_values(node);
                let table = node.named_child_count() > 0
                    && node
                        .named_children(&mut node.walk())
                        .all(|c| c.kind() == "pair")
                    && values.iter().all(|v| v.literal);
                if table {
                    return Value::list(values);
                }
                let mut out = Value::unknown();
                for value in &values {
                    out.absorb(value);
                    out.built |= value.built;
                }
                out
            }
            "assignment_expression" | "augmented_assignment_expression" => {
                let right = node
                    .child_by_field_name("right")
                    .map_or_else(Value::unknown, |r| self.expression(r));
                let Some(left) = node.child_by_field_name("left") else {
                    return right;
                };
                let value = if node.kind() == "augmented_assignment_expression" {
                    Value::concat(&[self.expression(left), right])
                } else {
                    right
                };
                self.bind(left, value.clone());
                value
            }
            "await_expression"
            | "parenthesized_expression"
            | "spread_element"
            | "sequence_expression"
            | "as_expression"
            | "non_null_expression"
            | "satisfies_expression"
            | "type_assertion" => {
                let parts = self.children_values(node);
                // `x as T`: the value is the first part; `(a, b)`: the last.
                match node.kind() {
                    "as_expression"
                    | "non_null_expression"
                    | "satisfies_expression"
                    | "type_assertion" => parts.into_iter().next().unwrap_or_default(),
                    _ => parts.into_iter().last().unwrap_or_default(),
                }
            }
            "ternary_expression" => {
                let parts = self.children_values(node);
                Value::either(&parts[1.min(parts.len())..])
            }
            // A generator's `yield x` is what a loop over its call gets, as a return would be.
            "yield_expression" => {
                let yielded = node
                    .named_child(0)
                    .map_or_else(Value::unknown, |v| self.expression(v));
                // `yield* walk(p)` hands on what the inner generator yields.
                self.returns.push(yielded);
                Value::unknown()
            }
            "function_expression" | "arrow_function" | "function" | "generator_function" => {
                // A callback's value is what it returns (`t.map((c) => String.fromCharCode(c))`).
                let returns = self.function(node);
                let mut out = Value::unknown();
                for value in &returns {
                    out.absorb(value);
                }
                out
            }
            _ => {
                // An object literal and the like: its parts' origins, and whether one was
                // built (`{ host: `${net}.${h}` }`, `{ text: `SELECT … ${id}` }`).
                let parts = self.children_values(node);
                let mut out = Value::unknown();
                for p in &parts {
                    out.absorb(p);
                    out.built |= p.built;
                }
                out
            }
        }
    }

    fn children_values(&mut self, node: Node<'t>) -> Vec<Value> {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        children
            .into_iter()
            .filter(|c| c.kind() != "comment")
            .map(|c| match c.kind() {
                "pair" => c
                    .child_by_field_name("value")
                    .map_or_else(Value::unknown, |v| self.expression(v)),
                "shorthand_property_identifier" => self
                    .scope
                    .vars
                    .get(self.text(c))
                    .cloned()
                    .unwrap_or_default(),
                _ => self.expression(c),
            })
            .collect()
    }

    fn member(&mut self, node: Node<'t>) -> Value {
        let at = self.place(node);
        if let Some(name) = self.env_name(node) {
            return self.flow.read_env(&name, &at);
        }
        let whole = self.text(node).replace(' ', "");
        match whole.as_str() {
            "process.env" => {
                return Value::from_source(
                    Source::Secret,
                    "the whole environment (process.env)",
                    &at,
                )
            }
            "process.argv" => return Value::from_source(Source::Input, "process.argv", &at),
            _ => {}
        }
        if let Some(object) = node.child_by_field_name("object") {
            if self.is_module(object) {
                if let Some(name) = self.callee(node) {
                    if name != whole
                        || self
                            .scope
                            .vars
                            .contains_key(whole.split('.').next().unwrap_or(""))
                    {
                        return Value::object(Object::Module(name));
                    }
                }
            }
            let container = self.expression(object);
            // `pathToFileURL(file).href` names the file `file` does.
            if node
                .child_by_field_name("property")
                .is_some_and(|p| matches!(self.text(p), "href" | "pathname"))
            {
                return container;
            }
            if let (Object::List(items), Some(index)) =
                (&container.object, node.child_by_field_name("index"))
            {
                let key = self.expression(index);
                return match key
                    .consts
                    .first()
                    .and_then(|k| k.parse::<usize>().ok())
                    .and_then(|i| items.get(i))
                {
                    Some(item) => item.clone(),
                    None => Value::either(items),
                };
            }
            return container.derived();
        }
        Value::unknown()
    }

    /// An object literal's property, e.g. `{ shell: true }`'s `shell`, as written.
    fn property(&self, object: Option<&Node>, key: &str) -> Option<String> {
        let object = object?;
        let mut cursor = object.walk();
        let found = object.named_children(&mut cursor).find_map(|pair| {
            let k = pair.child_by_field_name("key")?;
            (self.text(k).trim_matches(['"', '\'']) == key)
                .then(|| {
                    pair.child_by_field_name("value")
                        .map(|v| self.text(v).to_string())
                })
                .flatten()
        });
        found
    }

    fn call(&mut self, node: Node<'t>, constructed: bool) -> Value {
        let at = self.place(node);
        let function = node
            .child_by_field_name("function")
            .or_else(|| node.child_by_field_name("constructor"));
        let argument_nodes: Vec<Node> = node
            .child_by_field_name("arguments")
            .map(|a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor)
                    .filter(|c| c.kind() != "comment")
                    .collect()
            })
            .unwrap_or_default();
        let args: Vec<Value> = argument_nodes.iter().map(|a| self.expression(*a)).collect();
        let first = args.first().cloned().unwrap_or_default();
        let options = argument_nodes.iter().rev().find(|a| a.kind() == "object");
        let all: Vec<&Value> = args.iter().collect();
        let Some(function) = function else {
            return Value::unknown();
        };
        if function.kind() == "import" {
            // `await import(file)`: runs the module at that path or address.
            let module = if first.shape().contains("://") {
                Value::from_source(Source::Network, url_of(&first), &at)
            } else {
                self.flow.read_path(&first, &at)
            };
            self.flow.run_code(
                &module.derived_if_tainted(),
                "JavaScript (a dynamic import)",
                &at,
            );
            return Value::object(Object::Plain);
        }
        let module_call = match function.kind() {
            "member_expression" => function
                .child_by_field_name("object")
                .is_some_and(|o| self.is_module(o)),
            _ => true,
        };
        let name = if module_call {
            self.callee(function)
        } else {
            None
        };
        // Objects the pass made (a socket, a process) answer methods, not module calls.
        let Some(name) = name.filter(|n| !n.starts_with("socket.") && !n.starts_with("process:"))
        else {
            return self.method(function, &argument_nodes, &args, &at);
        };
        if let Some(defined) = self.functions.get(&name).copied() {
            return self.call_function(defined, &args);
        }
        if name == RESOLVE {
            self.resolved.extend(args);
            return Value::unknown();
        }
        if constructed && name == "Promise" {
            if let Some(executor) = argument_nodes.first().filter(|e| is_function(e)) {
                let outer = std::mem::take(&mut self.resolved);
                self.call_function(*executor, &[Value::object(Object::Module(RESOLVE.into()))]);
                let resolved = std::mem::replace(&mut self.resolved, outer);
                let mut value = Value::unknown();
                for v in &resolved {
                    value.absorb(v);
                }
                return value;
            }
        }
        let name = name.strip_prefix("node:").unwrap_or(&name);
        // The global object's properties are the globals (`globalThis["Function"]`).
        let name = ["globalThis.", "window.", "global.", "self."]
            .iter()
            .find_map(|prefix| name.strip_prefix(prefix))
            .unwrap_or(name)
            .to_string();
        if matches!(
            name.as_str(),
            "console.log" | "console.info" | "process.stdout.write"
        ) {
            for arg in &all {
                self.printed.absorb(arg);
            }
            return Value::unknown();
        }
        if name == "String.fromCharCode" || name == "String.fromCodePoint" {
            // Spelled from literal codes (`String.fromCharCode(..._k)`), the text is known, so
            // a module or method it names is found.
            let codes: Vec<Value> = args
                .iter()
                .flat_map(|arg| match &arg.object {
                    Object::List(items) => items.clone(),
                    _ => vec![arg.clone()],
                })
                .collect();
            let text: Option<String> = codes
                .iter()
                .map(|code| {
                    code.consts
                        .first()
                        .and_then(|c| c.parse::<u32>().ok())
                        .and_then(char::from_u32)
                })
                .collect();
            let mut out = text.map_or_else(Value::unknown, |text| Value {
                literal: false,
                ..Value::literal(text)
            });
            out = out.tainted(Origin {
                source: Source::Decoded,
                what: "text spelled as character codes".into(),
                at: at.clone(),
            });
            return out;
        }
        if name == "setInterval" {
            if let Some(callback) = argument_nodes.first() {
                let text = self.text(*callback);
                let grows = [".push(", "Buffer.alloc", "+=", ".concat("]
                    .iter()
                    .any(|w| text.contains(w));
                if grows && !self.code.text.contains("clearInterval") {
                    self.flow.endless_loop(&at, false);
                }
            }
        }
        if (name == "child_process.fork"
            || name.ends_with(".spawn")
            || name.ends_with(".spawnSync"))
            && args.iter().any(|a| {
                a.consts.iter().any(|c| c == "./skill/index.js")
                    || a.origin(Source::Input)
                        .is_some_and(|o| o.what == "process.argv")
            })
            && self.code.text.contains("__filename")
        {
            self.flow.emit(
                &at,
                Hit {
                    rule: "resource-exhaustion.fork-bomb",
                    category: Category::ResourceExhaustion,
                    risk: Risk::Critical,
                    message: "starts copies of its own script, which start copies in turn, until the machine runs out of processes: delete it".into(),
                    source: None,
                },
            );
        }
        if name == "require" {
            return match first.consts.first() {
                Some(module) => Value::object(Object::Module(module_name(module))),
                None => Value::unknown(),
            };
        }
        if EVALS.contains(&name.as_str()) || (constructed && name == "Function") {
            let code = if name == "Function" {
                args.last().cloned().unwrap_or_default()
            } else {
                first.clone()
            };
            if !(matches!(name.as_str(), "setTimeout" | "setInterval")
                && code.consts.is_empty()
                && code.taint.is_empty()
                && !code.built)
            {
                self.flow.run_code(&code, "JavaScript", &at);
            }
            return Value::unknown();
        }
        if SHELL_CALLS.contains(&name.as_str()) {
            return shell_string(self.flow, self.code, &first, &at);
        }
        if SPAWNS.contains(&name.as_str()) {
            let shell = self
                .property(options, "shell")
                .is_some_and(|s| s != "false");
            let mut argv = vec![first.clone()];
            if let Some(Value {
                object: Object::List(items),
                ..
            }) = args.get(1)
            {
                argv.extend(items.iter().cloned());
            }
            if name.ends_with("fork") {
                argv.insert(0, Value::literal("node"));
            }
            if shell {
                let joined = Value::concat(
                    &argv
                        .iter()
                        .flat_map(|a| [a.clone(), Value::literal(" ")])
                        .collect::<Vec<_>>(),
                );
                return shell_string(self.flow, self.code, &joined, &at);
            }
            let mut process = shell::run_argv(self.flow, self.code, &argv, &at);
            if first
                .consts
                .iter()
                .any(|p| super::python::is_shell_program(p))
            {
                process.object = Object::Module("process:shell".into());
            }
            return process;
        }
        if matches!(
            name.as_str(),
            "fs.readdirSync"
                | "fs.readdir"
                | "fs.promises.readdir"
                | "fs/promises.readdir"
                | "glob.sync"
                | "fast-glob.sync"
                | "globSync"
        ) {
            let pattern = if name.contains("readdir") {
                Value::concat(&[first.clone(), Value::literal("/*")])
            } else {
                first.clone()
            };
            let mut entries = pattern.derived();
            entries.shape = Some(pattern.shape().to_string());
            return entries;
        }
        if READS.contains(&name.as_str()) {
            return self.flow.read_path(&first, &at);
        }
        if matches!(
            name.as_str(),
            "mailparser.simpleParser" | "imapflow.ImapFlow"
        ) {
            let mut mail = Value::from_source(Source::Input, "an email someone sent", &at);
            mail.absorb(&first);
            return mail;
        }
        if ARCHIVES.contains(&name.as_str()) {
            // An archive's entries are what was in the file or buffer, and their names are
            // whatever its maker chose (`../../.bashrc` among them).
            let mut entries = self.flow.read_path(&first, &at);
            entries.absorb(&first.derived());
            let entries = entries.tainted(Origin {
                source: Source::Network,
                what: "the entry names of an archive, which its maker chooses".into(),
                at: at.clone(),
            });
            // `yauzl.open(file, options, (err, zip) => …)`
            for callback in argument_nodes.iter().filter(|a| is_function(a)) {
                self.call_function(*callback, &[Value::unknown(), entries.clone()]);
            }
            return entries;
        }
        if WRITES.contains(&name.as_str()) || APPENDS.contains(&name.as_str()) {
            let data = args.get(1).cloned().unwrap_or_default();
            self.flow
                .write_path(&first, &data, APPENDS.contains(&name.as_str()), &at);
            return Value::unknown();
        }
        if name == "fs.createWriteStream" {
            let append = self
                .property(options, "flags")
                .is_some_and(|f| f.contains('a'));
            return Value::object(Object::File {
                path: Box::new(first),
                write: true,
                append,
            });
        }
        if COPIES.contains(&name.as_str()) {
            if let Some(destination) = args.get(1) {
                let data = self.flow.read_path(&first, &at);
                self.flow.copy(&data, destination, &at);
            }
            return Value::unknown();
        }
        if REMOVES.contains(&name.as_str()) {
            self.flow.remove(&first, &at);
            return Value::unknown();
        }
        if matches!(
            name.as_str(),
            "crypto.createCipheriv" | "crypto.createCipher" | "crypto.subtle.encrypt"
        ) {
            self.flow.cipher(&at);
        }
        if matches!(name.as_str(), "os.homedir") {
            return Value::literal("~");
        }
        if matches!(name.as_str(), "process.cwd" | "os.tmpdir") {
            return Value::literal(if name == "os.tmpdir" { "/tmp" } else { "." });
        }
        if matches!(
            name.as_str(),
            "url.pathToFileURL" | "url.fileURLToPath" | "URL"
        ) {
            return first;
        }
        if PATH_JOINS.contains(&name.as_str()) {
            let mut parts = Vec::new();
            for (index, arg) in args.iter().enumerate() {
                if index > 0 {
                    parts.push(Value::literal("/"));
                }
                parts.push(arg.clone());
            }
            return Value::concat(&parts);
        }
        if FETCHES.contains(&name.as_str()) || CONNECTIONS.contains(&name.as_str()) {
            if CONNECTIONS.contains(&name.as_str())
                && first.built
                && super::flow::sweeps_addresses(self.code.text)
            {
                self.flow.scan(&at);
            } else {
                self.flow.send(&format!("`{name}`"), &all, &at);
            }
            let mut fetched = Value::from_source(Source::Network, url_of(&first), &at);
            if CONNECTIONS.contains(&name.as_str()) {
                fetched.object = Object::Module("socket".into());
            }
            // The callback is given what was fetched (`https.get(url, (res) => …)`).
            for callback in argument_nodes.iter().filter(|a| is_function(a)) {
                self.callbacks.push((*callback, fetched.clone()));
            }
            return fetched;
        }
        if SENDS.contains(&name.as_str()) {
            self.flow.send(&format!("`{name}`"), &all, &at);
            return Value::from_source(Source::Network, url_of(&first), &at);
        }
        if RESOLVES.contains(&name.as_str()) {
            self.flow.send("a DNS look-up", &all, &at);
            return Value::unknown();
        }
        if matches!(name.as_str(), "Buffer.from" | "atob") {
            let encoding = args
                .get(1)
                .and_then(|e| e.consts.first().cloned())
                .unwrap_or_default();
            if name == "atob" || matches!(encoding.as_str(), "base64" | "hex" | "base64url") {
                return first.derived().tainted(Origin {
                    source: Source::Decoded,
                    what: format!(
                        "text hidden in {}",
                        if name == "atob" { "base64" } else { &encoding }
                    ),
                    at: at.clone(),
                });
            }
            return first;
        }
        if matches!(
            name.as_str(),
            "btoa" | "zlib.gzipSync" | "zlib.deflateSync" | "zlib.brotliCompressSync"
        ) {
            return self.flow.encode(&first, &format!("`{name}`"), &at);
        }
        if matches!(
            name.as_str(),
            "os.hostname" | "os.userInfo" | "os.networkInterfaces"
        ) {
            return Value::unknown();
        }
        let mut out = Value::unknown();
        for arg in &all {
            out.absorb(arg);
        }
        out
    }

    fn method(
        &mut self,
        function: Node<'t>,
        argument_nodes: &[Node<'t>],
        args: &[Value],
        at: &Place,
    ) -> Value {
        let first = args.first().cloned().unwrap_or_default();
        let (receiver, method) = match function.kind() {
            "member_expression" => (
                function
                    .child_by_field_name("object")
                    .map_or_else(Value::unknown, |o| self.expression(o)),
                function
                    .child_by_field_name("property")
                    .map(|p| self.text(p).to_string())
                    .unwrap_or_default(),
            ),
            _ => (self.expression(function), String::new()),
        };
        let all: Vec<&Value> = args.iter().collect();
        let is = |value: &Value, prefix: &str| matches!(&value.object, Object::Module(m) if m.starts_with(prefix));
        if method == "pipe"
            && ((is(&receiver, "socket") && is(&first, "process:shell"))
                || (is(&receiver, "process:shell") && is(&first, "socket")))
        {
            self.flow
                .reverse_shell("pipes a network connection into a shell", at);
        }
        match (method.as_str(), &receiver.object) {
            ("pipe", _) if matches!(first.object, Object::File { write: true, .. }) => {
                if let Object::File { path, append, .. } = &first.object {
                    let path = (**path).clone();
                    self.flow.write_path(&path, &receiver, *append, at);
                }
                first.clone()
            }
            ("on" | "once", _)
                if is(&receiver, "socket") || receiver.origin(Source::Network).is_some() =>
            {
                // `res.on('data', (chunk) => …)`: the callback is given what arrives.
                for callback in argument_nodes.iter().filter(|a| is_function(a)) {
                    self.call_function(*callback, std::slice::from_ref(&receiver));
                }
                Value::unknown()
            }
            ("write" | "end", Object::Module(m)) if m == "socket" => {
                self.flow.send("a network connection", &all, at);
                Value::unknown()
            }
            (
                "write" | "end",
                Object::File {
                    path,
                    write: true,
                    append,
                },
            ) => {
                let path = (**path).clone();
                self.flow.write_path(&path, &first, *append, at);
                Value::unknown()
            }
            ("send" | "emit", Object::Module(m)) if m == "socket" => {
                self.flow.send("a network connection", &all, at);
                Value::unknown()
            }
            ("toString", _)
                if first
                    .consts
                    .iter()
                    .any(|c| c == "base64" || c == "hex" || c == "base64url") =>
            {
                self.flow.encode(
                    &receiver,
                    &format!("`.toString('{}')`", first.consts[0]),
                    at,
                )
            }
            (
                "query" | "execute" | "exec" | "run" | "all" | "get" | "prepare" | "raw" | "unsafe",
                _,
            ) if first.built => {
                self.flow.query(&first, at);
                receiver.derived()
            }
            ("post" | "put" | "patch", _) => {
                self.flow.send(&format!("`.{method}()`"), &all, at);
                Value::from_source(Source::Network, url_of(&first), at)
            }
            ("join", _) if receiver.object != Object::Plain || !receiver.consts.is_empty() => {
                match &receiver.object {
                    Object::List(items) => {
                        let separator = first.consts.first().cloned().unwrap_or_else(|| ",".into());
                        let mut parts = Vec::new();
                        for (index, item) in items.iter().enumerate() {
                            if index > 0 {
                                parts.push(Value::literal(separator.clone()));
                            }
                            parts.push(item.clone());
                        }
                        Value::concat(&parts)
                    }
                    _ => receiver.derived(),
                }
            }
            // `TARGETS.map((d) => path.join(home, d))`: the callback run on each item.
            ("map", Object::List(items))
                if argument_nodes.first().is_some_and(|f| is_function(f)) =>
            {
                let callback = argument_nodes[0];
                let items = items.clone();
                let mapped = items
                    .iter()
                    .map(|item| self.call_function(callback, std::slice::from_ref(item)))
                    .collect();
                Value::list(mapped)
            }
            ("concat", _) => {
                let mut parts = vec![receiver.clone()];
                parts.extend(args.iter().cloned());
                Value::concat(&parts)
            }
            ("then", _) => receiver.derived(),
            _ => {
                let mut out = receiver.derived();
                for arg in &all {
                    out.absorb(arg);
                }
                // `form.append('f', data)`, `parts.push(key)`: the object now holds the data.
                if let Some(object) = function.child_by_field_name("object") {
                    self.absorb_into_container(object, &Value::either(args).derived());
                }
                out
            }
        }
    }

    fn endless_loop(&mut self, node: Node<'t>) {
        let endless = match node.kind() {
            "for_statement" => {
                let text = self.text(node);
                let head = text.split(')').next().unwrap_or("").replace(' ', "");
                head.ends_with(";;") || head == "for(;;"
            }
            _ => node.child_by_field_name("condition").is_some_and(|c| {
                matches!(
                    self.text(c).trim_matches(['(', ')', ' ']),
                    "true" | "1" | "!0" | "!false"
                )
            }),
        };
        if !endless {
            return;
        }
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let body_text = self.text(body);
        if ["break", "return", "throw", "process.exit"]
            .iter()
            .any(|w| body_text.contains(w))
        {
            return;
        }
        let forks = ["fork(", "spawn(", "exec(", "execSync(", "new Worker("]
            .iter()
            .any(|w| body_text.contains(w));
        let grows = [
            ".push(",
            "+=",
            ".concat(",
            "Buffer.alloc",
            "writeFileSync(",
            "appendFileSync(",
            ".write(",
            ".repeat(",
        ]
        .iter()
        .any(|w| body_text.contains(w));
        if forks || grows {
            let at = self.place(node);
            self.flow.endless_loop(&at, forks);
        }
    }

    fn unbounded_recursion(&mut self, name: &str, body: Node<'t>, at: &Place) {
        if name.is_empty() {
            return;
        }
        let text = self.text(body);
        let calls_itself = text.contains(&format!("{name}("));
        let can_stop = [
            "if", "?", "while", "for", "throw", "&&", "||", "catch", "switch",
        ]
        .iter()
        .any(|w| text.contains(w))
            || text.split("return").skip(1).any(|r| {
                !r.trim_start().starts_with(&format!("{name}("))
                    && !r.trim_start().starts_with(&format!("await {name}("))
            });
        if calls_itself && !can_stop {
            self.flow.unbounded_recursion(name, at);
        }
    }
}

/// A function's parameter: input, or a request from the network when it is named like one
/// (`(req, res) => …` in every Node server framework).
fn parameter_value(name: &str, at: &Place) -> Value {
    if matches!(name, "req" | "request" | "ctx" | "event") {
        Value::from_source(
            Source::Network,
            format!("a request from the network (`{name}`)"),
            at,
        )
    } else {
        Value::from_source(Source::Input, format!("the parameter `{name}`"), at)
    }
}

/// Whether `node` is a function written in place (a callback, an executor, `(c) => …`).
fn is_function(node: &Node) -> bool {
    matches!(
        node.kind(),
        "arrow_function" | "function_expression" | "function"
    )
}

fn module_name(text: &str) -> String {
    let name = text.trim().trim_matches(['"', '\'', '`']);
    name.strip_prefix("node:").unwrap_or(name).to_string()
}

fn url_of(value: &Value) -> String {
    match value.shape() {
        "*" => "a URL".into(),
        shape => unquote(shape).to_string(),
    }
}
