//! What the code pass knows about a value: the strings it can be (when they are built from
//! literals), whether it was built by formatting, and where its data came from.

/// Where data came from, when that decides what sending or running it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// A key, credential file, token or the whole environment.
    Secret,
    /// Something fetched from another machine.
    Network,
    /// Something a caller or a user typed: a function's parameter, `argv`, `input()`, `$1`.
    Input,
    /// Text decoded from base64, hex, rot13 or the like: written so that nobody reads it.
    Decoded,
}

/// A place in a skill: a file and a line, with the text there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Place {
    pub file: String,
    pub line: usize,
    pub excerpt: String,
}

/// A source of data and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Origin {
    pub source: Source,
    /// What was read, for the message: `~/.aws/credentials`, `https://…`, `sys.argv`.
    pub what: String,
    pub at: Place,
}

/// What a name stands for beyond its data: a module, a function, an open file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum Object {
    #[default]
    Plain,
    /// An imported module or one of its functions, by its full name (`import subprocess as sp`,
    /// `from os import system`, `const {exec} = require('child_process')`).
    Module(String),
    /// A file opened for reading or writing, by its path (`append` when opened with `a`).
    File {
        path: Box<Value>,
        write: bool,
        append: bool,
    },
    /// A list or tuple, element by element (an argument vector, a loop's choices).
    List(Vec<Value>),
}

/// How many strings a value may be before the pass stops tracking them.
const MAX_CONSTANTS: usize = 32;
/// How long a tracked string may grow.
const MAX_CONSTANT_BYTES: usize = 8 * 1024;

/// An abstract value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Value {
    /// The strings it may be; empty when unknown.
    pub consts: Vec<String>,
    /// Made of literals only.
    pub literal: bool,
    /// Made by formatting or concatenating a literal with something that is not one.
    pub built: bool,
    /// Made by putting two or more literals together (new text no line rule has seen).
    pub assembled: bool,
    pub taint: Vec<Origin>,
    pub object: Object,
    /// Its text with the unknown parts as `*` (`/tmp/.backend-*` for a name with a pid in it),
    /// so a file written under a name only partly known is found again by the same name.
    pub shape: Option<String>,
}

impl Value {
    /// A literal string.
    pub fn literal(text: impl Into<String>) -> Value {
        let text = text.into();
        Value {
            shape: Some(text.clone()),
            consts: vec![text],
            literal: true,
            ..Value::default()
        }
    }

    /// The text it stands for, `*` where unknown.
    pub fn shape(&self) -> &str {
        match (self.consts.as_slice(), &self.shape) {
            ([only], _) => only,
            (_, Some(shape)) => shape,
            _ => "*",
        }
    }

    /// Something the pass knows nothing about.
    pub fn unknown() -> Value {
        Value::default()
    }

    /// Data that came from `source`.
    pub fn from_source(source: Source, what: impl Into<String>, at: &Place) -> Value {
        Value::unknown().tainted(Origin {
            source,
            what: what.into(),
            at: at.clone(),
        })
    }

    pub fn object(object: Object) -> Value {
        Value {
            object,
            ..Value::default()
        }
    }

    pub fn tainted(mut self, origin: Origin) -> Value {
        if !self.taint.contains(&origin) {
            self.taint.push(origin);
        }
        self
    }

    /// The first origin of `source` in its data.
    pub fn origin(&self, source: Source) -> Option<&Origin> {
        self.taint.iter().find(|o| o.source == source)
    }

    /// Adds the data of `other` (its origins) to this value.
    pub fn absorb(&mut self, other: &Value) {
        for origin in &other.taint {
            if !self.taint.contains(origin) {
                self.taint.push(origin.clone());
            }
        }
    }

    /// This container (a list, a dict, a message) now holds `value` too: `parts.append(key)`,
    /// `report[k] = secret`, `msg.add_attachment(data)`. Its text is no longer known, and a
    /// list has one more item, known by its origins only.
    pub fn hold(&mut self, value: &Value) {
        if matches!(self.object, Object::Module(_)) {
            return;
        }
        self.absorb(value);
        self.consts.clear();
        self.literal = false;
        if let Object::List(items) = &mut self.object {
            items.push(value.derived());
        }
    }

    /// The value `parts` make when put one after the other (`a + b`, `f"{a}{b}"`, `"$a$b"`).
    pub fn concat(parts: &[Value]) -> Value {
        let mut out = Value {
            consts: vec![String::new()],
            literal: true,
            ..Value::default()
        };
        let mut literals = 0;
        let mut shape = String::new();
        for part in parts {
            shape.push_str(part.shape());
            out.absorb(part);
            if part.literal {
                literals += 1;
            } else {
                out.literal = false;
            }
            out.built |= part.built;
            out.assembled |= part.assembled;
            if out.consts.is_empty() || part.consts.is_empty() {
                out.consts.clear();
                continue;
            }
            let mut next = Vec::new();
            for prefix in &out.consts {
                for suffix in &part.consts {
                    if next.len() < MAX_CONSTANTS
                        && prefix.len() + suffix.len() <= MAX_CONSTANT_BYTES
                    {
                        next.push(format!("{prefix}{suffix}"));
                    }
                }
            }
            out.consts = next;
        }
        if !out.literal && literals > 0 {
            out.built = true;
        }
        if parts.len() > 1 && literals > 1 {
            out.assembled = true;
        }
        if shape.chars().any(|c| c != '*') {
            out.shape = Some(shape);
        }
        out
    }

    /// A list or tuple of `items`, with their origins.
    pub fn list(items: Vec<Value>) -> Value {
        let mut out = Value::either(&items);
        out.consts.clear();
        out.literal = items.iter().all(|i| i.literal);
        out.object = Object::List(items);
        out
    }

    /// A value that is one of `choices` (a loop variable over a list, either branch).
    pub fn either(choices: &[Value]) -> Value {
        let mut out = Value {
            literal: !choices.is_empty(),
            ..Value::default()
        };
        let mut all_known = !choices.is_empty();
        for choice in choices {
            out.absorb(choice);
            out.literal &= choice.literal;
            out.built |= choice.built;
            out.assembled |= choice.assembled;
            all_known &= !choice.consts.is_empty();
            for c in &choice.consts {
                if !out.consts.contains(c) {
                    out.consts.push(c.clone());
                }
            }
        }
        // Too many to follow is as good as unknown: a partial list would be wrong.
        if !all_known || out.consts.len() > MAX_CONSTANTS {
            out.consts.clear();
        }
        // A name partly known stays so when every choice has that shape (a function that
        // returns the path it wrote).
        // A choice known by nothing at all (a call followed no deeper) does not blur it.
        let named: Vec<&Value> = choices
            .iter()
            .filter(|c| c.shape.is_some() || !c.consts.is_empty())
            .collect();
        if let Some((first, rest)) = named.split_first() {
            if first.shape.is_some() && rest.iter().all(|c| c.shape == first.shape) {
                out.shape.clone_from(&first.shape);
            }
        }
        // Several known texts go by what they start with (`~/Documents`, `~/src`: `~/*`).
        if out.shape.is_none() && out.consts.len() > 1 {
            let first = &out.consts[0];
            let common = out.consts[1..].iter().fold(first.len(), |common, text| {
                first
                    .char_indices()
                    .zip(text.chars())
                    .take_while(|((i, a), b)| *i < common && a == b)
                    .count()
            });
            let prefix: String = first.chars().take(common).collect();
            if !prefix.is_empty() {
                out.shape = Some(format!("{prefix}*"));
            }
        }
        out
    }

    /// `a || b`, `a ?? b`, `a or b`: either one, and when `a` is not known by its text, `b`'s
    /// text stands for it (`process.env.KUBECONFIG || "~/.kube/config"` reads that file).
    pub fn or_else(first: &Value, fallback: &Value) -> Value {
        let mut out = Value::either(&[first.clone(), fallback.clone()]);
        if first.consts.is_empty() && first.shape.is_none() {
            out.consts.clone_from(&fallback.consts);
            out.shape.clone_from(&fallback.shape);
        }
        out
    }

    /// An element of this listing or collection (a loop's name over it): its origins, and the
    /// listing's names, so an entry of `~/.ssh/*` is a file of `~/.ssh`.
    pub fn element(&self) -> Value {
        match &self.object {
            Object::List(items) => Value::either(items),
            _ => {
                let mut entry = self.derived();
                entry.consts.clone_from(&self.consts);
                entry.shape.clone_from(&self.shape);
                entry
            }
        }
    }

    /// Data derived from this one (a method's result, an encoding): its origins, not its text.
    pub fn derived(&self) -> Value {
        let mut out = Value::unknown();
        out.absorb(self);
        out.built = self.built;
        out
    }

    /// Its origins alone, or nothing when it has none (a file's text is not the file's name).
    pub fn derived_if_tainted(&self) -> Value {
        if self.taint.is_empty() {
            Value::literal("")
        } else {
            self.derived()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place() -> Place {
        Place {
            file: "run.py".into(),
            line: 3,
            excerpt: String::new(),
        }
    }

    #[test]
    fn concatenated_literals_fold_and_are_assembled() {
        let value = Value::concat(&[Value::literal("AKIA"), Value::literal("XYZ")]);
        assert_eq!(value.consts, vec!["AKIAXYZ"]);
        assert!(value.literal && value.assembled && !value.built);
    }

    #[test]
    fn a_literal_with_an_unknown_is_built_and_keeps_the_unknowns_origin() {
        let secret = Value::from_source(Source::Secret, "~/.ssh/id_rsa", &place());
        let value = Value::concat(&[Value::literal("key="), secret]);
        assert!(value.consts.is_empty());
        assert!(value.built && !value.literal);
        assert_eq!(value.origin(Source::Secret).unwrap().what, "~/.ssh/id_rsa");
    }

    #[test]
    fn a_partly_known_text_keeps_its_shape() {
        let pid = Value::unknown();
        let value = Value::concat(&[Value::literal("/tmp/.backend-"), pid]);
        assert!(value.consts.is_empty());
        assert_eq!(value.shape(), "/tmp/.backend-*");
    }

    #[test]
    fn either_knows_every_choice_or_none() {
        let both = Value::either(&[Value::literal(".zshenv"), Value::literal(".bashrc")]);
        assert_eq!(both.consts, vec![".zshenv", ".bashrc"]);
        let one_unknown = Value::either(&[Value::literal(".zshenv"), Value::unknown()]);
        assert!(one_unknown.consts.is_empty());
    }
}
